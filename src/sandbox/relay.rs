//! `hello-tui sandbox` at a terminal: the confined command never gets the
//! terminal itself (see [`super::terminal`]), so each of our stdin, stdout
//! and stderr that is a terminal reaches it through a pipe that we relay.
//! What comes back is drawn through [`crate::sanitize::for_display`], so
//! the command cannot set the title or clipboard, move the cursor or write
//! fake text over the user's screen. Redirected streams (files, pipes) are
//! passed to it as they are: they lead nowhere a terminal reads.
//!
//! The terminal keeps its own line discipline: input reaches the command a
//! line at a time, as typed and echoed by the terminal, so a REPL works
//! and a full-screen program does not (it has no terminal to draw on).

use std::io::{self, IsTerminal, Read, Write};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;

/// Which of our streams are terminals, so relayed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Relay {
    stdin: bool,
    stdout: bool,
    stderr: bool,
}

/// The output relays of a running command, to wait for once it ended.
pub(crate) struct Running {
    outputs: Vec<JoinHandle<()>>,
}

impl Relay {
    /// Pipes instead of the terminal for every stream that is one.
    pub(crate) fn plan(cmd: &mut Command) -> Relay {
        let relay = Relay {
            stdin: io::stdin().is_terminal(),
            stdout: io::stdout().is_terminal(),
            stderr: io::stderr().is_terminal(),
        };
        if relay.stdin {
            cmd.stdin(Stdio::piped());
        }
        if relay.stdout {
            cmd.stdout(Stdio::piped());
        }
        if relay.stderr {
            cmd.stderr(Stdio::piped());
        }
        relay
    }

    /// Starts copying between the terminal and the command's pipes.
    pub(crate) fn start(self, child: &mut Child) -> Running {
        if let Some(mut pipe) = child.stdin.take().filter(|_| self.stdin) {
            // Not joined: it sits in a read of the terminal until the user
            // types, and ends with the process.
            std::thread::spawn(move || {
                let mut stdin = io::stdin().lock();
                let mut buf = [0u8; 4096];
                while let Ok(read) = stdin.read(&mut buf) {
                    if read == 0 || pipe.write_all(&buf[..read]).is_err() {
                        break;
                    }
                }
            });
        }
        let mut outputs = Vec::new();
        if let Some(pipe) = child.stdout.take().filter(|_| self.stdout) {
            outputs.push(std::thread::spawn(move || {
                copy_out(pipe, &mut io::stdout())
            }));
        }
        if let Some(pipe) = child.stderr.take().filter(|_| self.stderr) {
            outputs.push(std::thread::spawn(move || {
                copy_out(pipe, &mut io::stderr())
            }));
        }
        Running { outputs }
    }
}

impl Running {
    /// Waits until the command's output is all drawn (the pipes close when
    /// the last process of its namespace ends).
    pub(crate) fn finish(self) {
        for output in self.outputs {
            let _ = output.join();
        }
    }
}

/// Copies `from` to `to`, sanitized. A UTF-8 character cut by a read is
/// kept until the rest comes, so it is not drawn as two replacements.
fn copy_out(mut from: impl Read, to: &mut impl Write) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut pending = Vec::new();
    loop {
        let read = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        pending.extend_from_slice(&buf[..read]);
        let complete = complete_utf8_prefix(&pending);
        let text = String::from_utf8_lossy(&pending[..complete]);
        if to
            .write_all(crate::sanitize::for_display(&text).as_bytes())
            .and_then(|()| to.flush())
            .is_err()
        {
            break;
        }
        pending.drain(..complete);
    }
    if !pending.is_empty() {
        let text = String::from_utf8_lossy(&pending);
        let _ = to.write_all(crate::sanitize::for_display(&text).as_bytes());
        let _ = to.flush();
    }
}

/// How much of `bytes` to decode now: all of it, unless it ends inside a
/// UTF-8 sequence that more bytes may complete (at most 3 bytes held back).
fn complete_utf8_prefix(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(error) if error.error_len().is_none() => error.valid_up_to(),
        // Invalid bytes, not a cut: decode all (they become U+FFFD).
        Err(_) => bytes.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::complete_utf8_prefix;

    #[test]
    fn a_character_cut_by_a_read_waits_for_its_rest() {
        let text = "aé".as_bytes();
        assert_eq!(complete_utf8_prefix(&text[..2]), 1);
        assert_eq!(complete_utf8_prefix(text), 3);
        assert_eq!(complete_utf8_prefix(b"a\xff"), 2);
    }
}
