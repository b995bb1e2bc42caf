import Foundation
import GooglePlay
import StoreSimulator
import SubreconCore
import SubreconTestSupport
import Testing

/// Google's voided purchases as a store feed (CONTRACT "Which users a run asks about"): pages, filters, dedupe, failures.
@Suite("Google Play voided purchases feed over loopback")
struct VoidedPurchasesTests {
    static func voided(_ token: String, order: String?, at: Date, subscription: Bool = true) -> SimulatedVoidedPurchase {
        SimulatedVoidedPurchase(purchaseToken: token, orderID: order, voidedTime: at, isSubscription: subscription)
    }

    static func failure<T>(_ result: Result<T, SourceError>) -> SourceError? {
        if case .failure(let error) = result { return error }
        return nil
    }

    @Test("several pages with type=1 and the window sent; subscriptions and one-time voids; deduplicated by order id")
    func pages() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.setVoidedPageSize(2)
            for n in 0..<5 {
                await loop.simulator.addVoided(Self.voided("tok-\(n)", order: "GPA.\(n)", at: day(-1)))
            }
            await loop.simulator.addVoided(Self.voided("tok-inapp", order: "GPA.inapp", at: day(-1), subscription: false))
            // The same order listed twice: one entry.
            await loop.simulator.addVoided(Self.voided("tok-0", order: "GPA.0", at: day(-0.5)))
            // Two orders (renewals) of one purchase token: two entries, one token.
            await loop.simulator.addVoided(Self.voided("tok-1", order: "GPA.1..1", at: day(-0.5)))
            // No order id: deduplicated by token.
            await loop.simulator.addVoided(Self.voided("tok-noorder", order: nil, at: day(-0.4)))
            await loop.simulator.addVoided(Self.voided("tok-noorder", order: nil, at: day(-0.3)))
            // Outside the window.
            await loop.simulator.addVoided(Self.voided("tok-old", order: "GPA.old", at: day(-4)))

            let since = day(-3)
            let feed = try await loop.client.voidedPurchases(since: since, until: Date()).get()
            #expect(feed.purchaseTokens == ["tok-0", "tok-1", "tok-2", "tok-3", "tok-4", "tok-inapp", "tok-noorder"])
            #expect(feed.entries.count == 8, "tok-1's two orders are two entries")
            #expect(feed.rejected == 0)
            #expect(feed.pages == 5, "10 voids in the window, 2 a page")
            #expect(!feed.clamped)
            let queries = await loop.simulator.voidedRequestQueries()
            #expect(queries.count == 5)
            #expect(queries.allSatisfy { $0["type"] == "1" && $0["maxResults"] == "1000" })
            #expect(queries.allSatisfy { $0["startTime"] == String(Int64((since.timeIntervalSince1970 * 1000).rounded(.down))) })
            #expect(queries.allSatisfy { $0["endTime"] != nil })
            #expect(queries.first?["token"] == nil)
            #expect(queries.dropFirst().map { $0["token"] } == ["vp-2", "vp-4", "vp-6", "vp-8"])
        }
    }

    @Test("the simulator lists subscription voids only for type=1 (type 0, Google's default, is one-time products)")
    func typeFilter() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.addVoided(Self.voided("tok-sub", order: "GPA.sub", at: day(-1)))
            await loop.simulator.addVoided(Self.voided("tok-inapp", order: "GPA.inapp", at: day(-1), subscription: false))
            let access = try await loop.client.tokens.token()
            func tokens(_ query: [String: String]) async throws -> [String] {
                let request = SimulatorRequest(
                    method: "GET", path: "/androidpublisher/v3/applications/\(PlayLoopback.package)/purchases/voidedpurchases",
                    query: query, headers: ["authorization": "Bearer " + access.value])
                let response = try #require(await loop.simulator.handle(request))
                #expect(response.status == 200)
                return try GoogleJSON.voidedPurchases(response.body).voidedPurchases?.compactMap(\.purchaseToken) ?? []
            }
            #expect(try await tokens([:]) == ["tok-inapp"])
            #expect(try await tokens(["type": "0"]) == ["tok-inapp"])
            #expect(try await tokens(["type": "1"]) == ["tok-sub", "tok-inapp"])
            let end = Int64(day(-2).timeIntervalSince1970 * 1000)
            #expect(try await tokens(["type": "1", "endTime": String(end), "startTime": String(end - 86_400_000)]).isEmpty)
        }
    }

    @Test("a window older than Google's 30 days: startTime moved to 30 days before the end, and said so")
    func clamp() async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let clamped = GooglePlayClient.voidedWindow(since: now.addingTimeInterval(-40 * 86_400), until: now, now: now)
        #expect(clamped.start == now.addingTimeInterval(-30 * 86_400) && clamped.end == now && clamped.clamped)
        let inside = GooglePlayClient.voidedWindow(since: now.addingTimeInterval(-3 * 86_400), until: now, now: now)
        #expect(inside.start == now.addingTimeInterval(-3 * 86_400) && !inside.clamped)
        // An end after the wall clock is the wall clock (Google refuses a future endTime).
        let future = GooglePlayClient.voidedWindow(since: now, until: now.addingTimeInterval(86_400), now: now)
        #expect(future.end == now && future.start == now)
        // A past as-of keeps its own 30 days (the run's as-of is Google's "now" in a replay).
        let past = now.addingTimeInterval(-100 * 86_400)
        let replay = GooglePlayClient.voidedWindow(since: past.addingTimeInterval(-7 * 86_400), until: past, now: now)
        #expect(replay.start == past.addingTimeInterval(-7 * 86_400) && replay.end == past)

        try await PlayLoopback.run { loop in
            await loop.simulator.addVoided(Self.voided("tok-recent", order: "GPA.r", at: day(-10)))
            await loop.simulator.addVoided(Self.voided("tok-35", order: "GPA.35", at: day(-35)))
            let feed = try await loop.client.voidedPurchases(since: day(-60), until: Date()).get()
            #expect(feed.clamped)
            #expect(feed.purchaseTokens == ["tok-recent"])
            let query = try #require(await loop.simulator.voidedRequestQueries().first)
            let start = try #require(query["startTime"].flatMap { Int64($0) })
            let end = try #require(query["endTime"].flatMap { Int64($0) })
            #expect(end - start == 30 * 86_400_000)
        }
    }

    @Test("a malformed page fails the feed")
    func malformed() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.addVoided(Self.voided("tok", order: "GPA.1", at: day(-1)))
            await loop.simulator.setVoidedFault(.malformedJSON, times: 1)
            let error = try #require(Self.failure(await loop.client.voidedPurchases(since: day(-3), until: Date())))
            #expect(error.origin == .googlePlay && error.kind == .fetch)
            #expect(error.message.contains("voided purchases: malformed"))
        }
    }

    @Test("entries of the wrong type are a malformed page; odd fields are read leniently; an entry without a token is rejected")
    func decoding() throws {
        #expect(throws: (any Error).self) { try GoogleJSON.voidedPurchases(Data(#"{"voidedPurchases": [1, 2]}"#.utf8)) }
        #expect(throws: (any Error).self) { try GoogleJSON.voidedPurchases(Data(#"[]"#.utf8)) }
        let page = try GoogleJSON.voidedPurchases(
            Data(
                #"""
                {"voidedPurchases": [
                  {"purchaseToken": "a", "orderId": "o1", "voidedTimeMillis": "99999999999999999999999", "voidedSource": "2",
                   "voidedReason": 7, "purchaseTimeMillis": "-99999999999999999999"},
                  {"purchaseToken": 5, "orderId": ["x"], "voidedTimeMillis": "12.5", "voidedSource": {}},
                  {"purchaseToken": "b\u0000c", "voidedTimeMillis": 1e300}
                 ],
                 "tokenPagination": {"nextPageToken": ""}, "pageInfo": {"totalResults": "3"}}
                """#.utf8))
        let entries = try #require(page.voidedPurchases)
        #expect(entries.count == 3)
        #expect(entries[0].voidedTimeMillis == .max && entries[0].voidedTime == nil)
        #expect(entries[0].purchaseTimeMillis == .min)
        #expect(entries[0].voidedSource == 2 && entries[0].voidedReason == 7)
        #expect(entries[1].purchaseToken == nil && entries[1].orderId == nil && entries[1].voidedTimeMillis == nil)
        #expect(entries[1].dedupeKey == nil)
        #expect(entries[2].purchaseToken?.unicodeScalars.contains("\u{0}") == false)
        #expect(entries[2].voidedTimeMillis == .max)
        #expect(entries[2].dedupeKey == "token:" + (entries[2].purchaseToken ?? ""))
        #expect(page.nextPageToken == nil, "an empty continuation token is the last page")
        #expect(page.pageInfo?.totalResults == 3)
    }

    @Test("an entry with no purchase token is counted as rejected, the rest read")
    func rejectedEntry() async throws {
        try await PlayLoopback.run { loop in
            let body = Data(
                #"{"voidedPurchases": [{"orderId": "GPA.x", "voidedTimeMillis": "1"}, {"purchaseToken": "tok-ok", "orderId": "GPA.y"}]}"#
                    .utf8)
            await loop.simulator.setVoidedFault(.raw(status: 200, headers: ["content-type": "application/json"], body: body), times: 1)
            let feed = try await loop.client.voidedPurchases(since: day(-3), until: Date()).get()
            #expect(feed.purchaseTokens == ["tok-ok"])
            #expect(feed.rejected == 1)
        }
    }

    @Test("401 with an expired access token: refreshed once and read; 401 twice fails the feed without naming the token")
    func unauthorized() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.addVoided(Self.voided("tok", order: "GPA.1", at: day(-1)))
            _ = try await loop.client.voidedPurchases(since: day(-3), until: Date()).get()
            await loop.simulator.expireAccessTokens()
            let feed = try await loop.client.voidedPurchases(since: day(-3), until: Date()).get()
            #expect(feed.purchaseTokens == ["tok"])
            var counters = await loop.simulator.counters()
            #expect(counters.tokensIssued == 2 && counters.unauthorized == 1)

            await loop.simulator.setVoidedFault(.status(401), times: 2)
            let error = try #require(Self.failure(await loop.client.voidedPurchases(since: day(-3), until: Date())))
            #expect(error.message.contains("401"))
            #expect(!error.message.contains("ya29"))
            counters = await loop.simulator.counters()
            #expect(counters.tokensIssued == 3, "one refresh, no third try")
        }
    }

    @Test("a 5xx is retried and then read; a lasting 5xx fails the feed naming the status")
    func serverErrors() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.addVoided(Self.voided("tok", order: "GPA.1", at: day(-1)))
            await loop.simulator.setVoidedFault(.status(503), times: 1)
            let feed = try await loop.client.voidedPurchases(since: day(-3), until: Date()).get()
            #expect(feed.purchaseTokens == ["tok"])
            #expect(loop.observer.statuses.filter { $0 == 503 }.count == 1)

            await loop.simulator.setVoidedFault(.status(500))
            let error = try #require(Self.failure(await loop.client.voidedPurchases(since: day(-3), until: Date())))
            #expect(error.message.contains("voided purchases") && error.message.contains("500"))
        }
    }

    @Test("403 and another app's 404 fail the feed with the operator's hint")
    func refused() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.setVoidedFault(.status(403), times: 1)
            let forbidden = try #require(Self.failure(await loop.client.voidedPurchases(since: day(-3), until: Date())))
            #expect(forbidden.message.contains("HTTP 403") && forbidden.message.contains("Play Console"))
            await loop.simulator.setVoidedFault(.status(404), times: 1)
            let missing = try #require(Self.failure(await loop.client.voidedPurchases(since: day(-3), until: Date())))
            #expect(missing.message.contains("GOOGLE_PLAY_PACKAGE_NAME"))
        }
    }

    @Test("a repeated continuation token, or more pages than the cap, fails the feed")
    func unboundedPaging() async throws {
        try await PlayLoopback.run { loop in
            let body = Data(#"{"voidedPurchases": [{"purchaseToken": "t"}], "tokenPagination": {"nextPageToken": "again"}}"#.utf8)
            await loop.simulator.setVoidedFault(.raw(status: 200, headers: [:], body: body), times: 2)
            let repeated = try #require(Self.failure(await loop.client.voidedPurchases(since: day(-3), until: Date())))
            #expect(repeated.message.contains("continuation token"))

            await loop.simulator.setVoidedPageSize(1)
            for n in 0...GooglePlayClient.maxVoidedPages {
                await loop.simulator.addVoided(Self.voided("tok-\(n)", order: "GPA.\(n)", at: day(-1)))
            }
            let capped = try #require(Self.failure(await loop.client.voidedPurchases(since: day(-3), until: Date())))
            #expect(capped.message.contains("more than \(GooglePlayClient.maxVoidedPages) pages"))
        }
    }

    // MARK: Refunds the feed states (CONTRACT "Finance figures")

    static func decoded(_ json: String) throws -> [VoidedPurchase] {
        try GoogleJSON.voidedPurchases(Data(json.utf8)).voidedPurchases ?? []
    }

    @Test("a void states a refund keyed as the lookup keys the same order: play_store, the order id, voided time, amount unknown")
    func refundKeyedAsTheLookup() throws {
        let voids = try Self.decoded(
            #"{"voidedPurchases":[{"kind":"androidpublisher#voidedPurchase","purchaseToken":"tok-1","orderId":"GPA.1111-2222-3333-44444..2","#
                + #""purchaseTimeMillis":"1780000000000","voidedTimeMillis":"1780400000123","voidedSource":0,"voidedReason":1}]}"#)
        let fact = try #require(voids.first?.refundedPurchase)
        let asOf = Date(timeIntervalSince1970: 1_781_000_000)
        let refund = try #require(SeenRefund.of([fact], asOf: asOf).first)
        let lookup = try #require(
            try GooglePlayMapping.storeFacts(GoogleJSON.subscription(Data(GooglePlayMappingTests.sample.utf8)), token: "tok-1").first)
        #expect(refund.store == lookup.purchase.store.rawValue && refund.store == "play_store")
        #expect(refund.transactionID == lookup.purchase.storeTransactionID)
        #expect(refund.refundedAt == Date(timeIntervalSince1970: 1_780_400_000.123))
        #expect(refund.amount == nil && refund.currency == nil, "the voided list states no price: unknown, never guessed")
        #expect(fact.isSandbox == nil)
    }

    @Test("a void without a readable voided time or without an order id states no refund")
    func noRefundWithoutTimeOrOrder() throws {
        let voids = try Self.decoded(
            #"{"voidedPurchases":[{"purchaseToken":"tok-a","orderId":"GPA.a"},"#
                + #"{"purchaseToken":"tok-b","orderId":"GPA.b","voidedTimeMillis":"soon"},"#
                + #"{"purchaseToken":"tok-c","orderId":"GPA.c","voidedTimeMillis":"99999999999999999999"},"#
                + #"{"purchaseToken":"tok-d","voidedTimeMillis":"1780400000000"},"#
                + #"{"purchaseToken":"tok-e","orderId":"","voidedTimeMillis":"1780400000000"}]}"#)
        #expect(voids.count == 5)
        #expect(voids.allSatisfy { $0.refundedPurchase == nil })
    }

    @Test("voids read over loopback state their refunds by order id")
    func refundsOverLoopback() async throws {
        try await PlayLoopback.run { loop in
            await loop.simulator.addVoided(Self.voided("tok-r", order: "GPA.r..1", at: day(-1)))
            await loop.simulator.addVoided(Self.voided("tok-n", order: nil, at: day(-1)))
            let feed = try await loop.client.voidedPurchases(since: day(-3), until: Date()).get()
            let refunds = feed.entries.compactMap(\.refundedPurchase)
            #expect(refunds.map(\.storeTransactionID) == ["GPA.r..1"])
            #expect(feed.entries.count == 2)
        }
    }
}
