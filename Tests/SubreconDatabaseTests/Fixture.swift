import Foundation
import SubreconCore

/// Fixed instants for the scan tables. (The database itself: `TestDatabase` in `SubreconTestSupport`.)
enum Fixture {
    static let asOf = ISO8601.date("2025-06-01T00:00:00Z")!
    static func day(_ days: Double) -> Date { asOf.addingTimeInterval(days * 86_400) }
}
