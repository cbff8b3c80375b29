"""The window that assembles every feature: MainWindow, the application entry, its settings,
help and about box. It sits above gui.features (it imports each one); nothing below imports it."""
