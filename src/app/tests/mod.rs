//! Components driven through the app's `update`, as keys reach them: they
//! need the whole `AppState`, which the components themselves never see.

mod approval_overlay;
mod variables_pane;
