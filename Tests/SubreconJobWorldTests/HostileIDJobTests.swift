import Foundation
import SubreconCore
import SubreconJob
import SubreconReports
import SubreconTestSupport
import SubreconTestWorld
import Testing

/// A strict RFC 4180 reader (byte level), independent of the writer: CRLF ends a record; a field is unquoted (no
/// quote, comma, CR or LF) or quoted with `""` for a quote. Anything else throws.
enum StrictCSVReader {
    struct Malformed: Error {}

    static func records(_ data: Data) throws -> [[String]] {
        let bytes = Array(data)
        var records: [[String]] = []
        var record: [String] = []
        var i = 0
        while i < bytes.count {
            var field: [UInt8] = []
            if bytes[i] == UInt8(ascii: "\"") {
                i += 1
                while true {
                    guard i < bytes.count else { throw Malformed() }
                    if bytes[i] == UInt8(ascii: "\"") {
                        if i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "\"") {
                            field.append(bytes[i])
                            i += 2
                            continue
                        }
                        i += 1
                        break
                    }
                    field.append(bytes[i])
                    i += 1
                }
            } else {
                while i < bytes.count, bytes[i] != UInt8(ascii: ","), bytes[i] != UInt8(ascii: "\r") {
                    guard bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\n") else { throw Malformed() }
                    field.append(bytes[i])
                    i += 1
                }
            }
            guard let text = String(validating: field, as: UTF8.self), i < bytes.count else { throw Malformed() }
            record.append(text)
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\r"), bytes[i + 1] == UInt8(ascii: "\n") else { throw Malformed() }
            i += 2
            records.append(record)
            record = []
        }
        return records
    }
}

/// Hostile text in a user id: the reports hold it exactly, one record per user, over each backend (what only
/// PostgreSQL's jsonb can refuse, a NUL, stays in `HostileTextJobTests`).
@Suite("Hostile ids: the reports hold them exactly", .serialized, .timeLimit(.minutes(3)))
struct HostileIDJobTests {
    @Test("a user id with CRLF and a forged-looking row gives exactly one drift.csv row per user", arguments: JobWorld.backends)
    func crlfUserID(_ backend: WorldBackend) async throws {
        try await JobWorld.with(backend) { h in
            // CRLF is one Character and a comma or quote followed by a combining mark is another: a writer deciding on
            // Characters leaves these unquoted, and the forged text after the CRLF becomes a row of its own.
            let ids = [
                "u-forged\r\nu-evil", "u-comma,\u{301}app_store,premium_monthly,9,active", "u-quote\"\u{301}x",
                "u-formula\r\n=cmd|' /C calc'!A0", "u-plain",
            ]
            for id in ids {
                try await h.seed(h.row(id, tier: 1, "active", end: -1), JobWorld.subscription(purchased: -1, expires: 29))
            }
            let result = try await h.run()
            #expect(result.exitStatus == .ok || result.exitStatus == .userErrors)
            let records = try StrictCSVReader.records(Data(contentsOf: result.folder.appendingPathComponent("drift.csv")))
            #expect(records.count == ids.count + 1, "header + one record per user")
            #expect(records.first == ReportRow.columns)
            try #require(records.allSatisfy { $0.count == ReportRow.columns.count })
            #expect(Set(records.dropFirst().map { $0[1] }) == Set(ids), "ids read back exactly")
            #expect(!records.contains { $0.count > 1 && $0[1] == "u-evil" })
            let intents = try StrictCSVReader.records(Data(contentsOf: result.folder.appendingPathComponent("push_intents.csv")))
            #expect(intents.dropFirst().allSatisfy { $0.count == IntentRow.columns.count && ids.contains($0[1]) })
        }
    }
}
