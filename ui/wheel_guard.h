#pragma once
// The mouse wheel over an input column scrolls the column; it changes a spin
// box or combo box only when that field has keyboard focus. Without this, a
// user scrolling the panels turns whatever number passes under the pointer
// (six notches over KV heads turned 8 into 2), and only a `*` in the title
// shows it.
class QWidget;

namespace trainmem::ui {

// Every spin box and combo box under `root` takes focus by click or Tab only
// (Qt::StrongFocus, never by wheel), and an unfocused one hands wheel events
// to the nearest enclosing scroll area. Call again after adding fields.
void guardWheel(QWidget* root);

}  // namespace trainmem::ui
