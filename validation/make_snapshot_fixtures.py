#!/usr/bin/python3
"""Write synthetic PyTorch memory snapshots for trainmem's C++ reader tests.

The files have the structure torch.cuda.memory._dump_snapshot writes (a
pickle.dump of the dict built by torch.cuda.memory._snapshot(): "segments",
"device_traces", "allocator_settings"; see torch/csrc/cuda/memory_snapshot.cpp
and the TypedDicts in the docstring of torch/cuda/memory.py::_snapshot), with
known numbers so the tests can assert peaks worked out by hand. No GPU or
torch is needed: plain dicts, lists, strings and ints, as in a real snapshot.

Usage: /usr/bin/python3 validation/make_snapshot_fixtures.py [OUT_DIR]
(default OUT_DIR: tests/data/snapshots next to this script's repository).
The generated files are committed; rerunning must reproduce them byte for byte.
"""
import json
import os
import pickle
import sys

MiB = 1 << 20

# Frames are listed innermost first, as torch's CapturedTraceback symbolizes
# them. Identical stacks share one list object, as torch's ivalue_symbolize /
# py_symbolize dedupe them, so the pickle refers to them through the memo.
def frame(filename, line, name):
    return {"filename": filename, "line": line, "name": name}

TORCH = "/opt/venv/lib/python3.11/site-packages/torch"
TRAIN_STEP = frame("train.py", 41, "train_step")
MAIN = frame("train.py", 88, "main")
FORWARD = [frame(TORCH + "/nn/modules/linear.py", 125, "forward"),
           frame(TORCH + "/nn/modules/module.py", 1747, "_call_impl"),
           frame("model.py", 60, "forward"), TRAIN_STEP, MAIN]
LOSS = [frame(TORCH + "/nn/functional.py", 3479, "cross_entropy"),
        frame(TORCH + "/nn/modules/loss.py", 1295, "forward"),
        frame(TORCH + "/nn/modules/module.py", 1747, "_call_impl"), TRAIN_STEP, MAIN]
BACKWARD = [frame(TORCH + "/autograd/graph.py", 825, "_engine_run_backward"),
            frame(TORCH + "/autograd/__init__.py", 347, "backward"),
            frame(TORCH + "/_tensor.py", 581, "backward"), TRAIN_STEP, MAIN]
# Recomputation under activation checkpointing: a forward called from backward.
RECOMPUTE = [frame(TORCH + "/nn/modules/linear.py", 125, "forward"),
             frame(TORCH + "/utils/checkpoint.py", 321, "backward"),
             frame(TORCH + "/autograd/function.py", 307, "apply")]
STEP = [frame(TORCH + "/optim/adam.py", 600, "_multi_tensor_adam"),
        frame(TORCH + "/optim/adam.py", 223, "step"),
        frame(TORCH + "/optim/optimizer.py", 487, "wrapper"), TRAIN_STEP, MAIN]
ZERO_GRAD = [frame(TORCH + "/optim/optimizer.py", 950, "zero_grad"), TRAIN_STEP, MAIN]
DATA = [frame("train.py", 30, "load_batch"), MAIN]


class Trace:
    """A device trace with a clock: 10 us between events, starting at 1000."""

    def __init__(self, stream=0):
        self.events = []
        self.stream = stream

    def add(self, action, addr, size, frames=None):
        event = {"action": action, "addr": addr, "size": size, "stream": self.stream,
                 "time_us": 1000 + 10 * len(self.events)}
        if frames is not None:  # torch omits "frames" when no context was recorded
            event["frames"] = frames
        self.events.append(event)

    def alloc(self, addr, size, frames):
        self.add("alloc", addr, size, frames)

    def free(self, addr, size, frames=None):
        self.add("free_requested", addr, size, frames)
        self.add("free_completed", addr, size, frames)


def block(address, size, state, requested_size=None, frames=None):
    return {"address": address, "size": size,
            "requested_size": size if requested_size is None else requested_size,
            "state": state, "frames": frames if frames is not None else []}


def segment(device, address, blocks, stream=0, segment_type="large", expandable=False, total_size=None):
    total = sum(b["size"] for b in blocks) if total_size is None else total_size
    allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    active = sum(b["size"] for b in blocks if b["state"] != "inactive")
    requested = sum(b["requested_size"] for b in blocks if b["state"] != "inactive")
    return {"device": device, "address": address, "total_size": total, "allocated_size": allocated,
            "active_size": active, "requested_size": requested, "stream": stream,
            "segment_type": segment_type, "segment_pool_id": (0, 0), "is_expandable": expandable,
            "frames": [], "blocks": blocks}


def allocator_settings(expandable=False):
    return {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True" if expandable else "",
            "max_split_size": -1, "garbage_collection_threshold": 0.0,
            "expandable_segments": expandable, "pinned_num_register_threads": 1,
            "release_lock_on_cudamalloc": False, "pinned_use_cuda_host_register": False,
            "roundup_power2_divisions": {"1": 0, "2": 0, "4": 0}}


def training_step():
    """One training step on device 0; the peaks are worked out in the test.

    Before recording began: segment S0 (96 MiB) holding the parameters
    (32 MiB) and the Adam states (64 MiB), both still allocated at the end.
    """
    s0, s1, s2, s3, s4 = (0x7F0000000000 + k * 0x10000000 for k in range(5))
    t = Trace()
    t.add("segment_alloc", s1, 60 * MiB, FORWARD)        # e0
    t.alloc(s1, 20 * MiB, FORWARD)                        # e1 activation 1
    t.alloc(s1 + 20 * MiB, 20 * MiB, FORWARD)             # e2 activation 2
    t.alloc(s1 + 40 * MiB, 20 * MiB, LOSS)                # e3 logits
    t.add("segment_alloc", s2, 20 * MiB, LOSS)            # e4
    t.alloc(s2, 20 * MiB, LOSS)                           # e5 softmax temporary
    t.free(s2, 20 * MiB, LOSS)                            # e6, e7
    t.alloc(s2, 16 * MiB, BACKWARD)                       # e8 gradient 1
    t.free(s1 + 40 * MiB, 20 * MiB, BACKWARD)             # e9, e10 logits
    t.add("segment_alloc", s3, 32 * MiB, BACKWARD)        # e11
    t.alloc(s3, 32 * MiB, BACKWARD)                       # e12 gradient 2
    t.free(s1 + 20 * MiB, 20 * MiB, BACKWARD)             # e13, e14
    t.free(s1, 20 * MiB, BACKWARD)                        # e15, e16
    t.add("segment_free", s1, 60 * MiB, BACKWARD)         # e17 (empty_cache)
    t.add("segment_alloc", s4, 20 * MiB, STEP)            # e18
    t.alloc(s4, 8 * MiB, STEP)                            # e19 Adam temporary
    t.free(s4, 8 * MiB, STEP)                             # e20, e21
    t.free(s2, 16 * MiB, ZERO_GRAD)                       # e22, e23
    t.free(s3, 32 * MiB, ZERO_GRAD)                       # e24, e25
    t.add("snapshot", 0, 0)                               # e26
    segments = [
        segment(0, s0, [block(s0, 32 * MiB, "active_allocated", frames=DATA),
                        block(s0 + 32 * MiB, 64 * MiB, "active_allocated")]),
        segment(0, s2, [block(s2, 20 * MiB, "inactive")]),
        segment(0, s3, [block(s3, 32 * MiB, "inactive")]),
        segment(0, s4, [block(s4, 20 * MiB, "inactive")]),
    ]
    return {"segments": segments, "device_traces": [t.events, []], "allocator_settings": allocator_settings()}


def ring_buffer():
    """The trace starts mid-run: blocks freed before any alloc was recorded.

    Alive before recording: X (10 MiB) and Y (6 MiB), freed in the trace, and
    Z (4 MiB block, 4 MiB - 512 B requested), never mentioned by the trace and
    still allocated at the end. V later reuses X's address.
    """
    base = 0x7F4000000000
    x, y, z, w = base, base + 10 * MiB, base + 16 * MiB, base + 20 * MiB
    t = Trace()
    t.add("free_requested", x, 10 * MiB)   # e0
    t.add("free_completed", x, 10 * MiB)   # e1
    t.alloc(w, 8 * MiB, FORWARD)           # e2 W
    t.add("free_completed", y, 6 * MiB)    # e3: its free_requested fell off the ring
    t.alloc(x, 12 * MiB, FORWARD)          # e4 V, at X's old address
    t.free(w, 8 * MiB)                     # e5, e6
    seg = segment(0, base, [block(x, 12 * MiB, "active_allocated", frames=FORWARD),
                            block(x + 12 * MiB, 4 * MiB, "inactive"),
                            block(z, 4 * MiB, "active_allocated", requested_size=4 * MiB - 512),
                            block(w, 12 * MiB, "inactive")])
    return {"segments": [seg], "device_traces": [t.events], "allocator_settings": allocator_settings()}


def expandable_segments():
    """Segment events of both kinds, with pre-existing segments.

    Before recording: P (20 MiB, freed by the trace) and Q (8 MiB, never
    mentioned, still reserved at the end).
    """
    p, q, e, f = 0x100000000, 0x200000000, 0x300000000, 0x400000000
    t = Trace()
    t.add("segment_free", p, 20 * MiB, DATA)               # e0
    t.add("segment_map", e, 20 * MiB, FORWARD)             # e1
    t.add("segment_map", e + 20 * MiB, 8 * MiB, FORWARD)   # e2 grows E to 28 MiB
    t.add("segment_unmap", e + 10 * MiB, 10 * MiB, STEP)   # e3 unmaps the middle
    t.add("segment_alloc", f, 2 * MiB, RECOMPUTE)          # e4
    t.add("segment_unmap", e, 10 * MiB, STEP)              # e5 unmaps the start
    # e6: an OOM carries device_free where other events carry addr.
    t.events.append({"action": "oom", "device_free": 3 * MiB, "size": 64 * MiB, "stream": 0,
                     "time_us": 1000 + 10 * len(t.events), "frames": BACKWARD})
    segments = [
        segment(0, q, [block(q, 8 * MiB, "active_allocated")], segment_type="small"),
        segment(0, e + 20 * MiB, [block(e + 20 * MiB, 8 * MiB, "inactive")], expandable=True),
        segment(0, f, [block(f, 2 * MiB, "inactive")], segment_type="small"),
    ]
    return {"segments": segments, "device_traces": [t.events], "allocator_settings": allocator_settings(True)}


def plain_data_types():
    """One value of each kind every protocol from 2 writes without REDUCE."""
    shared = [1, 2, 3]
    many = [f"s{i}" for i in range(300)]  # over 256 memo entries: LONG_BINPUT/LONG_BINGET
    return {
        "none": None, "true": True, "false": False,
        "ints": [0, 1, 255, 256, 65535, 65536, -1, -129, 2**31 - 1, -2**31, 2**31, 2**63 - 1, -2**63],
        "floats": [0.5, -2.25, 1e300, float("inf")],
        "text": "h\u00e9llo \u2603 \U0001F600", "long_text": "x" * 300,
        "tuples": [(), (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4)],
        "shared": [shared, shared], 42: "int key", (1, 2): "tuple key",
        "many": many, "many_again": many[299],
    }


def every_data_type():
    """Adds what needs protocol 5 to avoid REDUCE: bytes, bytearray, sets."""
    value = plain_data_types()
    value.update({"bytes": b"\x00\x01\xff", "long_bytes": b"\x01" * 300, "bytearray": bytearray(b"abc"),
                  "set": {7}, "frozenset": frozenset({8})})
    return value


def protocol_zero_value():
    """Protocol 0 writes text forms: INT, LONG, FLOAT, PUT/GET, LIST, DICT."""
    shared = [5, 6]
    return [1, -7, 2**40, True, False, None, 1.5, (1, 2), {1: 2}, shared, shared]


class Evil:
    """A pickle that would run a shell command when unpickled by Python."""

    def __reduce__(self):
        return (os.system, ("echo pwned",))


def write(out, name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "tests", "data", "snapshots")
    hostile = os.path.join(out, "hostile")
    corpus = os.path.join(out, "corpus")
    for d in (out, hostile, corpus):
        os.makedirs(d, exist_ok=True)

    snapshots = {"training_step": training_step(), "ring_buffer": ring_buffer(),
                 "expandable_segments": expandable_segments()}
    for name, snap in snapshots.items():
        for protocol in (2, 3, 4, 5):
            data = pickle.dumps(snap, protocol=protocol)
            write(out, f"{name}_p{protocol}.pickle", data)
            if protocol == 4:
                write(corpus, f"{name}.pickle", data)
    # The JSON twin is Python's own reading of the same dict: an independent
    # truth for the reader's value tree (frames and all).
    for name, snap in snapshots.items():
        with open(os.path.join(out, f"{name}.json"), "w") as f:
            json.dump(snap, f, indent=1, sort_keys=True)
            f.write("\n")

    for protocol in (2, 3, 4):
        write(out, f"data_types_p{protocol}.pickle", pickle.dumps(plain_data_types(), protocol=protocol))
    write(out, "data_types_p5.pickle", pickle.dumps(every_data_type(), protocol=5))
    write(out, "protocol0.pickle", pickle.dumps(protocol_zero_value(), protocol=0))
    write(corpus, "data_types.pickle", pickle.dumps(every_data_type(), protocol=5))
    write(corpus, "protocol0.pickle", pickle.dumps(protocol_zero_value(), protocol=0))

    training = pickle.dumps(snapshots["training_step"], protocol=4)
    evil = pickle.dumps(Evil(), protocol=4)
    write(hostile, "reduce_os_system.pickle", evil)                       # STACK_GLOBAL + REDUCE
    write(hostile, "global_os_system_p0.pickle", pickle.dumps(Evil(), protocol=0))  # GLOBAL + REDUCE
    # Below protocol 5, Python writes a bytearray as a call: refused, by design.
    write(hostile, "bytearray_p4.pickle", pickle.dumps(bytearray(b"abc"), protocol=4))
    write(hostile, "truncated.pickle", training[: len(training) // 2])
    write(hostile, "not_a_pickle.bin", b"%PDF-1.7\nthis is not a pickle\n")
    # BINUNICODE announcing 2^32-1 bytes with 3 present: must fail before allocating.
    write(hostile, "huge_length.pickle", b"\x80\x04X\xff\xff\xff\xffabc.")
    write(hostile, "huge_frame.pickle", b"\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\x7f}.")
    write(hostile, "deep_nesting.pickle", b"\x80\x02" + b"]" * 1000 + b"a" * 999 + b".")
    write(hostile, "self_reference.pickle", b"\x80\x02]q\x00h\x00a.")      # l = []; l.append(l)
    write(hostile, "stack_underflow.pickle", b"\x80\x02a.")
    write(hostile, "memo_miss.pickle", b"\x80\x02h\x05.")
    write(hostile, "long_65_bits.pickle", b"\x80\x02\x8a\x09" + b"\x00" * 8 + b"\x01.")
    write(hostile, "trailing_data.pickle", b"\x80\x02N.garbage")
    # Snapshot-shaped files that share one object where torch writes many: a
    # reader walking them naively would multiply its work.
    event = {"action": "alloc", "addr": 4096, "size": 512, "stream": 0, "time_us": 1}
    write(hostile, "shared_event.pickle",
          pickle.dumps({"segments": [], "device_traces": [[event, event]]}, protocol=4))
    trace = [dict(event, addr=4096 * k) for k in range(1, 4)]
    write(hostile, "repeated_trace.pickle",
          pickle.dumps({"segments": [], "device_traces": [trace, trace, trace]}, protocol=4))
    for name in sorted(os.listdir(hostile)):
        with open(os.path.join(hostile, name), "rb") as f:
            write(corpus, "hostile_" + name, f.read())


if __name__ == "__main__":
    main()
