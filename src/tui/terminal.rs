//! Terminal setup and, above all, restore: raw mode and the alternate screen
//! are undone on normal exit, on error, on panic and around Ctrl+Z.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};

use super::frame_writer::FrameTerminal;
use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};

/// Remembered so restoring never has to query the terminal (which could
/// block inside a panic hook).
static KEYBOARD_FLAGS_PUSHED: AtomicBool = AtomicBool::new(false);

/// The terminal draws through a `FrameWriter` over its own handle on
/// stdout (a `File`, unbuffered): a frame is one `write()`, not the pieces
/// stdout's 1 KiB line buffer would cut it into.
pub type Tui = FrameTerminal<File>;

/// Owns the terminal mode; dropping it restores the terminal.
pub(crate) struct TerminalGuard {
    pub terminal: Tui,
}

impl TerminalGuard {
    pub fn enter() -> io::Result<Self> {
        install_panic_hook();
        enter_modes()?;
        let out = File::from(io::stdout().as_fd().try_clone_to_owned()?);
        let terminal = FrameTerminal::new(out)?;
        Ok(Self { terminal })
    }

    /// Ctrl+Z: give the shell its terminal back, stop, and take it again on
    /// `fg`. The caller redraws everything afterwards.
    pub(crate) fn suspend(&mut self) -> io::Result<()> {
        restore();
        // SAFETY: raising a signal in our own process has no memory-safety
        // preconditions; SIGTSTP stops us until the shell sends SIGCONT.
        unsafe {
            libc::raise(libc::SIGTSTP);
        }
        enter_modes()?;
        self.terminal.clear()
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

fn enter_modes() -> io::Result<()> {
    enable_raw_mode()?;
    let mut out = io::stdout();
    execute!(
        out,
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste
    )?;
    // Lets terminals that support it report Shift+Enter distinctly from Enter.
    if crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false) {
        execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        KEYBOARD_FLAGS_PUSHED.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// Best-effort and idempotent: safe to call from the panic hook and again
/// from `Drop`. Errors are ignored because there is nowhere left to report
/// them and the other steps must still run.
pub fn restore() {
    let mut out = io::stdout();
    if KEYBOARD_FLAGS_PUSHED.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        out,
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// Restores the terminal before the panic is printed, so the message is
/// readable and the shell is usable afterwards — for a panic that ends the
/// workbench. One on another thread (a blocking task tokio catches, a
/// worker) does not: the workbench keeps running, so the terminal is left
/// as it is and the panic goes to the log only. The message is printed
/// through the sanitizer (the default hook would print it raw, and it may
/// quote a file or a server), with the backtrace when `RUST_BACKTRACE`
/// asks for one.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(move |info| {
        if !ends_the_workbench(&std::thread::current()) {
            tracing::error!("panic on a background thread (the workbench goes on): {info}");
            return;
        }
        restore();
        tracing::error!("panic: {info}");
        eprintln!(
            "{}",
            crate::sanitize::for_display(&format!("hello-tui {info}"))
        );
        let backtrace = std::backtrace::Backtrace::capture();
        if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
            eprintln!("{backtrace}");
        }
    }));
}

/// The UI loop runs on the main thread (`block_on` in `main`): a panic
/// there ends the workbench.
fn ends_the_workbench(thread: &std::thread::Thread) -> bool {
    thread.name() == Some("main")
}

#[cfg(test)]
mod tests {
    use super::ends_the_workbench;

    /// A panic on a background thread leaves the terminal alone (the
    /// workbench goes on); only the UI thread's ends it.
    #[test]
    fn only_the_ui_threads_panic_restores_the_terminal() {
        let on = |name: &str| {
            std::thread::Builder::new()
                .name(name.into())
                .spawn(|| ends_the_workbench(&std::thread::current()))
                .unwrap()
                .join()
                .unwrap()
        };
        assert!(on("main"));
        assert!(!on("tokio-runtime-worker"));
        assert!(!on("content-search-forward"));
    }
}
