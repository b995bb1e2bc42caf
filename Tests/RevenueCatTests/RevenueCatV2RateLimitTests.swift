import Foundation
import NIOHTTP1
import RevenueCat
import StoreSimulator
import Testing

/// RevenueCat v2's budget headers (docs/CONTRACT.md, "Hostile answers and bounded work"): read strictly, and a key
/// whose minute is nearly spent slows v2's limiter before a 429, without pausing anybody.
@Suite("RevenueCat v2's rate-limit headers")
struct RevenueCatV2RateLimitTests {
    static func headers(_ pairs: [(String, String)]) -> HTTPHeaders { HTTPHeaders(pairs) }

    @Test(
        "headers that say something",
        arguments: [
            ([("RevenueCat-Rate-Limit-Current-Usage", "432"), ("RevenueCat-Rate-Limit-Current-Limit", "480")], 432, 480, true),
            ([("revenuecat-rate-limit-current-usage", "431"), ("revenuecat-rate-limit-current-limit", "480")], 431, 480, false),
            ([("RevenueCat-Rate-Limit-Current-Usage", "0"), ("RevenueCat-Rate-Limit-Current-Limit", "1")], 0, 1, false),
            ([("RevenueCat-Rate-Limit-Current-Usage", "999"), ("RevenueCat-Rate-Limit-Current-Limit", "480")], 999, 480, true),
        ])
    func read(_ pairs: [(String, String)], usage: Int, limit: Int, nearlySpent: Bool) throws {
        let budget = try #require(RevenueCatV2RateLimit(Self.headers(pairs)))
        #expect(budget.usage == usage && budget.limit == limit)
        #expect(budget.isNearlySpent == nearlySpent)
    }

    @Test(
        "headers that say nothing: missing, repeated, signed, decimal, exponent, blank, huge, a limit of 0",
        arguments: [
            [(String, String)](),
            [("RevenueCat-Rate-Limit-Current-Usage", "470")],
            [("RevenueCat-Rate-Limit-Current-Limit", "480")],
            [("RevenueCat-Rate-Limit-Current-Usage", "470"), ("RevenueCat-Rate-Limit-Current-Limit", "0")],
            [("RevenueCat-Rate-Limit-Current-Usage", "-1"), ("RevenueCat-Rate-Limit-Current-Limit", "480")],
            [("RevenueCat-Rate-Limit-Current-Usage", "470.5"), ("RevenueCat-Rate-Limit-Current-Limit", "480")],
            [("RevenueCat-Rate-Limit-Current-Usage", "4.7e2"), ("RevenueCat-Rate-Limit-Current-Limit", "480")],
            [("RevenueCat-Rate-Limit-Current-Usage", ""), ("RevenueCat-Rate-Limit-Current-Limit", "480")],
            [("RevenueCat-Rate-Limit-Current-Usage", "470"), ("RevenueCat-Rate-Limit-Current-Limit", "99999999999999999999")],
            [("RevenueCat-Rate-Limit-Current-Usage", "٤٧٠"), ("RevenueCat-Rate-Limit-Current-Limit", "480")],
            [
                ("RevenueCat-Rate-Limit-Current-Usage", "470"), ("RevenueCat-Rate-Limit-Current-Usage", "10"),
                ("RevenueCat-Rate-Limit-Current-Limit", "480"),
            ],
        ])
    func sayNothing(_ pairs: [(String, String)]) {
        #expect(RevenueCatV2RateLimit(Self.headers(pairs)) == nil)
    }

    @Test("a nearly spent minute slows v2's gate once per answer, pausing nobody; a quiet one, or unreadable headers, do not")
    func gateSlowsDown() async throws {
        for (usage, limit, slows) in [("450", "480", true), ("10", "480", false), ("450", "x", false), (nil, nil, false)]
            as [(String?, String?, Bool)]
        {
            try await RevenueCatV2ClientTests.run { l in
                await l.simulator.setV2RateLimitHeaders(usage: usage, limit: limit)
                // A customer RevenueCat has: a 200, whose answer carries the headers.
                await l.simulator.setSubscriber(SimulatedSubscriber(firstSeen: Date(timeIntervalSince1970: 1_700_000_000)), for: "someone")
                let answer = try await l.client.existence(of: "someone")
                #expect(answer == .exists)
                #expect(l.gate.backOffDurations == (slows ? [.zero] : []), "\(usage ?? "-") of \(limit ?? "-")")
            }
        }
    }
}
