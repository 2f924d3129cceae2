//! Drives the real binary in a tmux pane: a tmux server of our own (its
//! socket named for the test process), killed on drop.

// Each test binary that includes this uses a different part of it.
#![allow(dead_code)]

use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `command` in a detached `width`x`height` session. `name` keeps
    /// test binaries running at the same time apart.
    pub fn start(name: &str, command: &str, width: u16, height: u16) -> Self {
        let socket = format!("hello-tui-{name}-{}", std::process::id());
        let status = Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null", "new-session", "-d"])
            .args([
                "-s",
                "t",
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
            ])
            .arg(command)
            .status()
            .expect("tmux must be installed to run this test (see docs/development.md)");
        assert!(status.success());
        Tmux { socket }
    }

    pub fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "t"])
    }

    /// A tmux format variable of the pane, e.g. `alternate_on`.
    pub fn flag(&self, name: &str) -> String {
        self.run(&["display-message", "-p", "-t", "t", &format!("#{{{name}}}")])
            .trim()
            .to_owned()
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.run(&args);
        // Separate sends: a lone Esc followed by a key would read as Alt+key.
        sleep(Duration::from_millis(150));
    }

    pub fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {text:?}:\n{screen}"
            );
            sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}
