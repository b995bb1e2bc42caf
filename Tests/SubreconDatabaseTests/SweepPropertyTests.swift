import Foundation
import PropertyBased
import SubreconDatabase
import SubreconPorts
import Testing

/// The rolling sweep's schedule (CONTRACT "Which users a run asks about"), by properties over generated ids, periods and starting nights: over any D
/// consecutive nights every tier holder's bucket is tonight's index exactly once. (`FeedAndSweepTests` shows the
/// same against PostgreSQL, whose SQL bucket `CandidateScanTests` checks against this one.)
@Suite("The sweep's schedule: properties")
struct SweepPropertyTests {
    @Test("over any D consecutive nights, each id is swept exactly once")
    func exactlyOncePerPeriod() async {
        await propertyCheck(count: 2_000, input: Gen.uint64(), Gen.int(in: 1...90), Gen.int(in: -30_000...40_000)) { seed, days, firstDay in
            let id = "user-\(seed)"
            let nights = (0..<days).map { offset in
                Date(timeIntervalSince1970: Double(firstDay + offset) * 86_400 + Double(seed % 86_400))
            }
            let swept = nights.filter { CandidateQuery.sweepNight(asOf: $0, days: days) == CandidateQuery.sweepBucket(of: id, days: days) }
            #expect(swept.count == 1, "\(id), D = \(days), from day \(firstDay)")
        }
    }

    @Test("the night index is whole UTC days since 1970-01-01 mod D, the same all day long")
    func nightIndex() async {
        await propertyCheck(count: 2_000, input: Gen.int(in: -30_000...40_000), Gen.int(in: 1...90), Gen.int(in: 0...86_399)) {
            day, days, second in
            let asOf = Date(timeIntervalSince1970: Double(day) * 86_400 + Double(second))
            let index = CandidateQuery.sweepNight(asOf: asOf, days: days)
            #expect((0..<days).contains(index))
            #expect(index == ((day % days) + days) % days)
        }
    }
}
