//! The generated Python file the editor benches open: five lines a
//! handler, so line N of a file of any size looks the same.

use std::fmt::Write as _;

/// `lines` lines of handlers calling `compute`.
pub fn python_source(lines: usize) -> String {
    let mut s = String::new();
    let mut i = 0;
    while i < lines {
        let _ = writeln!(s, "def handler_{i}(request, *args, **kwargs):");
        let _ = writeln!(s, "    \"\"\"Handle request {i}.\"\"\"");
        let _ = writeln!(
            s,
            "    value = compute(request.data[{i}], factor=3.5)  # note"
        );
        let _ = writeln!(s, "    return {{'id': {i}, 'value': value, 'ok': True}}");
        let _ = writeln!(s);
        i += 5;
    }
    s
}
