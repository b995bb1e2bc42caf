import Foundation
import SubreconCore
import SubreconJob
import SubreconPorts
import SubreconReports
import SubreconTestKit
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `subrecon finance` over the in-memory month (docs/CONTRACT.md, "subrecon finance"): flows once, stocks at the end,
/// gaps said, details that sum to the figures, the period's options.
@Suite("Finance over a period, in memory")
struct FinancePeriodTests {
    static func line(_ l: FinanceLine) -> String {
        let k = l.key
        let place = k.shard.map { " \($0) \(k.night ?? "")" } ?? ""
        return "\(k.figure) \(k.store) \(k.currency) \(k.basis)\(place) \(l.count) \(FinanceCSV.decimalString(l.value)) \(l.unknownPrice)"
    }

    static func close(batch: Int = 2) async throws -> (FinanceClose.Result, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("finance-\(UUID().uuidString)")
        let range = FinancePeriodRange(from: FinanceMonthFixture.from, to: FinanceMonthFixture.to)
        let result = try await FinanceClose.run(
            source: InMemoryFinanceSource.month, range: range, now: FinanceMonthFixture.now, directory: folder, details: true, batch: batch)
        return (result, folder)
    }

    @Test("a month: each flow once, the stocks of each shard's last night, every gap, exit 5")
    func month() async throws {
        let (result, folder) = try await Self.close()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(result.report.flows.map(Self.line) == FinanceMonthFixture.expectedFlows)
        #expect(result.report.stocks.map(Self.line) == FinanceMonthFixture.expectedStocks)
        #expect(result.report.gaps.map { "\($0.night) \($0.shard) \($0.kind)" } == FinanceMonthFixture.expectedGaps)
        #expect(result.exitStatus == .periodGaps)
        #expect(Set(result.report.runsNotCounted.map(\.reason)) == ["failed", "dry_run", "running"])
        #expect(!result.report.runsCounted.contains("n05-s1-failed") && result.report.runsCounted.contains("n10-s0-rerun"))
        #expect(result.report.nights.count == 30)
        let night30 = try #require(result.report.nights.last)
        #expect(night30.atRisk == ["USD": Decimal(string: "9.99")!, "EUR": Decimal(string: "4.49")!])
        #expect(result.report.nights[2].refunds == [:] && result.report.nights[1].refunds == ["USD": Decimal(string: "9.99")!])
        let stem = "finance-2026-11-01-2026-12-01"
        #expect(result.files == ["\(stem).csv", "\(stem).json", "\(stem).md", "\(stem).html", "\(stem)-details.csv"])
        for name in result.files { #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path)) }
    }

    @Test("the details file's sums are the figures exactly, and it lists every gap")
    func detailsSum() async throws {
        let (result, folder) = try await Self.close(batch: 1)
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = try String(contentsOf: folder.appendingPathComponent("finance-2026-11-01-2026-12-01-details.csv"), encoding: .utf8)
        let rows = text.components(separatedBy: "\r\n").dropFirst().filter { !$0.isEmpty }.map { $0.components(separatedBy: ",") }
        var sums: [String: (count: Int, value: Decimal, unknown: Int)] = [:]
        for r in rows where r[0] != "gap" {
            let key = r[0] == "stock" ? "\(r[1]) \(r[3]) \(r[8]) \(r[9]) \(r[11]) \(r[12])" : "\(r[1]) \(r[3]) \(r[8]) \(r[9])"
            var sum = sums[key] ?? (0, 0, 0)
            sum.count += 1
            if let amount = Decimal(string: r[7]), !r[7].isEmpty { sum.value += amount } else { sum.unknown += 1 }
            sums[key] = sum
        }
        let summed = sums.map { "\($0.key) \($0.value.count) \(FinanceCSV.decimalString($0.value.value)) \($0.value.unknown)" }
        #expect(Set(summed) == Set(FinanceMonthFixture.expectedFlows + FinanceMonthFixture.expectedStocks))
        #expect(rows.filter { $0[0] == "gap" }.map { "\($0[12]) \($0[11]) \($0[1])" } == FinanceMonthFixture.expectedGaps)
        #expect(result.report.flows.map(\.count).reduce(0, +) == rows.filter { $0[0] == "flow" }.count)
    }

    @Test("a complete period exits 0; a night not ended yet is a gap of its own kind")
    func completeAndNotYet() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("finance-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = InMemoryFinanceSource.month
        let first = FinancePeriodRange(from: FinanceMonthFixture.from, to: FinanceMonthFixture.instant("2026-11-03T00:00:00Z"))
        let complete = try await FinanceClose.run(
            source: source, range: first, now: FinanceMonthFixture.now, directory: folder, details: false)
        #expect(complete.exitStatus == .ok && complete.report.gaps.isEmpty)
        #expect(complete.files.count == 4)
        let late = FinancePeriodRange(
            from: FinanceMonthFixture.instant("2026-11-30T00:00:00Z"), to: FinanceMonthFixture.instant("2026-12-02T00:00:00Z"))
        let open = try await FinanceClose.run(source: source, range: late, now: FinanceMonthFixture.now, directory: folder, details: false)
        #expect(open.report.gaps.map { "\($0.night) \($0.shard) \($0.kind)" } == ["2026-12-01 0/2 not_yet", "2026-12-01 1/2 not_yet"])
    }

    @Test("the HTML is self-contained, well-formed, one chart per figure per currency and per drift kind")
    func html() async throws {
        let (result, folder) = try await Self.close()
        defer { try? FileManager.default.removeItem(at: folder) }
        let html = FinancePeriodHTML.render(result.report)
        let parser = XMLParser(data: Data(html.utf8))
        #expect(parser.parse(), "not well-formed: \(String(describing: parser.parserError))")
        #expect(!html.lowercased().contains("<script"))
        for external in ["src=", "href=", "url(", "@import", "<link", "<img", "<iframe"] { #expect(!html.contains(external)) }
        for title in ["refunds, USD", "restored, EUR", "revenue at risk (billing issue), USD", "missed_renewal", "grace_expired"] {
            #expect(html.contains("<title>\(title)</title>"), "no chart \(title)")
        }
        #expect(html.contains("2026-11-20") && html.contains("missing"))
    }

    @Test(
        "options: --month, --from/--to, and each refusal (exit 64)",
        arguments: [
            (nil, nil, "2026-11", "2026-11-01T00:00:00Z 2026-12-01T00:00:00Z"),
            (nil, nil, "2026-12", "2026-12-01T00:00:00Z 2027-01-01T00:00:00Z"),
            ("2026-11-14T03:00:00Z", "2026-11-15T03:00:00Z", nil, "2026-11-14T03:00:00Z 2026-11-15T03:00:00Z"),
            ("2026-11-15T00:00:00Z", "2026-11-14T00:00:00Z", nil, "--to must be after --from"),
            ("2025-01-01T00:00:00Z", "2026-01-03T00:00:00Z", nil, "the period is over 366 days; close it in shorter periods"),
            ("2026-11-01", "2026-12-01T00:00:00Z", nil, "--from must be a whole RFC 3339 instant"),
            (nil, nil, "2026-13", "--month must be YYYY-MM"),
            ("2026-11-01T00:00:00Z", nil, "2026-11", "give either --from and --to, or --month (not both)"),
            (nil, nil, nil, "give either --from and --to, or --month (not both)"),
        ] as [(String?, String?, String?, String)])
    func options(from: String?, to: String?, month: String?, expected: String) {
        do {
            let range = try FinancePeriodRange.parse(from: from, to: to, month: month)
            #expect("\(ISO8601.string(range.from)) \(ISO8601.string(range.to))" == expected)
        } catch let failure as CommandFailure {
            #expect(failure.status == .usage)
            #expect(failure.description.hasPrefix(expected), "\(failure.description)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("file names: whole days as dates, other bounds with their time")
    func stems() {
        #expect(FinancePeriodRange(from: FinanceMonthFixture.from, to: FinanceMonthFixture.to).stem == "finance-2026-11-01-2026-12-01")
        let odd = FinancePeriodRange(from: FinanceMonthFixture.night(14), to: FinanceMonthFixture.night(15))
        #expect(odd.stem == "finance-2026-11-14T030000Z-2026-11-15T030000Z")
    }
}
