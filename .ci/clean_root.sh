# Clean Debian 12 roots for .ci/run: made with mmdebstrap from this machine's
# own apt sources (so no archive host is written in the repository), entered
# with chroot, /proc, /sys and /dev mounted. Sourced by .ci/run.

cannot_run_here() {
    echo "CI: FAILED: the clean-root step cannot run on this machine: $*" >&2
    echo "CI: it proves the README's Quick start on a fresh Debian 12 root and is never skipped." >&2
    exit 1
}

clean_root_make() {  # clean_root_make DIR
    local dir=$1
    [ "$(id -u)" -eq 0 ] || cannot_run_here "it needs root (mmdebstrap, chroot, mount)"
    ./dev install ci || cannot_run_here "mmdebstrap could not be installed with apt-get"
    local sources=()
    [ -s /etc/apt/sources.list ] && sources+=(/etc/apt/sources.list)
    for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
        [ -s "$f" ] && sources+=("$f")
    done
    [ ${#sources[@]} -gt 0 ] || cannot_run_here "no apt sources in /etc/apt to take the archive from"
    # The archive settings this machine needs to reach its mirror (a proxy, a
    # snapshot archive's expired Release dates) go into the root as they are.
    local aptopt="$dir.aptopt"
    apt-config dump Acquire | grep -E '^Acquire::(Check-Valid-Until|Check-Date|https?::Proxy|Retries) ' >"$aptopt" || true
    local options=(--variant=apt)
    [ -s "$aptopt" ] && options+=("--aptopt=$aptopt")
    mmdebstrap "${options[@]}" bookworm "$dir" "${sources[@]}" ||
        cannot_run_here "mmdebstrap could not make a bookworm root from this machine's apt sources"
    cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
}

clean_root_copy_checkout() {  # clean_root_copy_checkout ROOT DEST: tracked and untracked-not-ignored files
    local root=$1 dest=$2
    mkdir -p "$root$dest"
    git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
        tar --null -T - -cf - | tar -xf - -C "$root$dest"
}

clean_roots_mounted=()
clean_root_mount() {  # clean_root_mount ROOT: once per root
    local root=$1 r
    for r in "${clean_roots_mounted[@]}"; do [ "$r" = "$root" ] && return 0; done
    mount -t proc proc "$root/proc" || cannot_run_here "cannot mount /proc in the root"
    mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys" || cannot_run_here "cannot bind /sys into the root"
    mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev" || cannot_run_here "cannot bind /dev into the root"
    clean_roots_mounted+=("$root")
}

clean_root_unmount_all() {
    local root
    for root in "${clean_roots_mounted[@]}"; do
        umount -R "$root/dev" "$root/sys" "$root/proc" 2>/dev/null || umount -lR "$root/dev" "$root/sys" "$root/proc" 2>/dev/null || true
    done
    clean_roots_mounted=()
}

clean_root_remove() {  # clean_root_remove DIR: never while anything is still mounted below it
    local dir=$1
    if grep -q " $dir/" /proc/mounts; then
        echo "CI: $dir still has mounts; left in place rather than removed" >&2
        return 0
    fi
    rm -rf --one-file-system "$dir"
}

clean_root_run() {  # clean_root_run ROOT SCRIPT: as a new root user would, with none of this machine's environment
    local root=$1 script=$2
    clean_root_mount "$root"
    chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 CI=true \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c "$script"
}

install_deb() {  # install_deb BUILD_DIR ROOT: the one .deb in BUILD_DIR, with apt-get, no recommends
    local debs=("$1"/trainmem_*.deb)
    [ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || { echo "CI: expected one trainmem_*.deb in $1, found: ${debs[*]}" >&2; return 1; }
    cp "${debs[0]}" "$2/tmp/"
    clean_root_run "$2" "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /tmp/$(basename "${debs[0]}") >/dev/null && dpkg -s trainmem | grep -E '^(Version|Depends):'"
}

png_has_size() {  # png_has_size FILE WIDTH HEIGHT: the signature and the IHDR's size
    local file=$1 w=$2 h=$3
    [ -f "$file" ] || { echo "CI: $file was not written" >&2; return 1; }
    local signature dims
    signature=$(od -An -tx1 -N8 "$file" | tr -d ' \n')
    [ "$signature" = "89504e470d0a1a0a" ] || { echo "CI: $file is not a PNG (starts $signature)" >&2; return 1; }
    # IHDR: width and height, 4 bytes big-endian each, at offset 16.
    dims=$(od -An -tu1 -j16 -N8 "$file" | awk '{print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8}')
    [ "$dims" = "${w}x${h}" ] || { echo "CI: $file is $dims, expected ${w}x${h}" >&2; return 1; }
    echo "CI: $file is a ${dims} PNG"
}
