import Foundation

/// Text an operator hands the job (docs/CONTRACT.md, "Commands"): no value may hold a control character. The rule is
/// here, below both its users: `products import` and `--users-file` (`SubreconCommand`, whose extension of this type
/// reads the files) refuse such a value in a file, and `StoredCatalog` refuses a `product_tiers` row holding one.
package enum OperatorText {
    /// The first scalar of `text` a terminal or a database would act on: C0 and C1 controls, DEL, the line and
    /// paragraph separators, a byte order mark and the bidirectional overrides.
    package static func control(in text: some StringProtocol) -> Unicode.Scalar? {
        text.unicodeScalars.first { scalar in
            switch scalar.value {
            case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF: true
            default: false
            }
        }
    }

    /// `U+001B`: a scalar named without printing it.
    package static func name(_ scalar: Unicode.Scalar) -> String { "U+" + String(format: "%04X", scalar.value) }
}
