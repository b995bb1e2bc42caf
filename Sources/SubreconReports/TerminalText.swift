import Foundation

/// Text printed to a terminal (`explain`, the run's summary, the one line a failure prints): every control
/// character a terminal would act on is escaped as `\u{1B}`, so a user id, a row's value or a source's message cannot
/// clear the screen, retitle the window, move the cursor or reorder the line (docs/CONTRACT.md, "Commands").
public enum TerminalText {
    /// `text` with C0 controls (a tab and a line break included), DEL, C1 controls, the line and paragraph separators
    /// and the bidirectional overrides and isolates written as `\u{XX}`; everything else as it is.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Several lines, each escaped: the line breaks between them are kept, any inside a line are not.
    public static func lines(_ lines: [String]) -> String { lines.map(escaped).joined(separator: "\n") }

    /// JSON text (an encoder's output) for a terminal: the controls a JSON encoder leaves raw inside strings (DEL, C1,
    /// the separators, the bidirectional controls) written as `\uXXXX` escapes, which JSON reads back as the same
    /// text. Outside strings JSON holds none of them.
    public static func json(_ data: Data) -> Data {
        let text = String(decoding: data, as: UTF8.self)
        guard text.unicodeScalars.contains(where: { $0.value >= 0x7F && isControl($0) }) else { return data }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar.value >= 0x7F && isControl(scalar) {
                out.append(contentsOf: String(format: "\\u%04x", scalar.value).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return Data(String(out).utf8)
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
