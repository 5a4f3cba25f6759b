#pragma once
// Ctrl+Z and Ctrl+Shift+Z (the platform's Undo and Redo) reach the window's
// Edit > Undo / Redo while a number field has focus. A spin box's line edit
// claims both keys for its own text undo (QLineEdit accepts the shortcut
// override), so after typing a value and pressing Tab, or clicking a chart
// tab (the tab bar takes no focus and the field keeps it), the keys did
// nothing: every edit there is already a step of the document's undo stack,
// so the line edit's own undo has nothing the document's lacks.
class QWidget;

namespace trainmem::ui {

// Hands Undo and Redo keys pressed in any spin box of `window` to the
// window's shortcuts. Installed once, on the application.
void sendUndoKeysToWindow(QWidget* window);

}  // namespace trainmem::ui
