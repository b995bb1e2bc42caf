import Foundation
import StoreSimulator
import SubreconCore
import SubreconTestSupport
import Testing

@testable import Stripe

/// The events feed window of these tests: `[since, until)`.
private let since = Date(timeIntervalSince1970: 1_780_000_000)
private let until = since.addingTimeInterval(3 * 86_400)

private func event(_ number: Int, type: String = "customer.subscription.updated", at offset: TimeInterval? = nil, customer: String? = nil)
    -> SimulatedStripeEvent
{
    SimulatedStripeEvent(
        id: "evt_\(number)", type: type, created: since.addingTimeInterval(offset ?? TimeInterval(number * 60)),
        customer: customer ?? "cus_\(number)")
}

@Suite("Stripe events feed against the loopback simulator")
struct StripeEventsTests {
    @Test("250 events come back over three pages, newest first, each customer named once per event id")
    func pages() async throws {
        try await StripeLoopback.run { loop in
            let events = (1...250).map { event($0) }
            // The same event listed twice (Stripe may repeat one across pages while events arrive): named once.
            await loop.simulator.setEvents(events + [event(7)])
            let feed = try await loop.client.events(since: since, until: until).get()
            #expect(feed.events == 250)
            #expect(feed.pages == 3)
            #expect(feed.withoutCustomer == 0)
            #expect(feed.customerIDs == (1...250).reversed().map { "cus_\($0)" })
            let requests = await loop.simulator.recordedRequests()
            #expect(requests.count == 3)
            #expect(requests.allSatisfy { $0.path == "/v1/events" })
            #expect(requests.map { $0.query["starting_after"] } == [nil, "evt_151", "evt_51"])
            #expect(requests.allSatisfy { $0.query["limit"] == "100" })
            #expect(requests.allSatisfy { $0.query["created[gte]"] == "1780000000" && $0.query["created[lt]"] == "1780259200" })
            let types = requests[0].query.filter { $0.key.hasPrefix("types[") }
            #expect(Set(types.values) == Set(StripeClient.feedEventTypes))
            #expect(types.count == StripeClient.feedEventTypes.count)
            #expect(requests.allSatisfy { $0.headers["authorization"] == "Bearer \(StripeLoopback.apiKey)" })
            #expect(requests.allSatisfy { $0.headers["stripe-version"] == StripeConfiguration.pinnedAPIVersion })
        }
    }

    @Test("only the asked types inside [since, until) are read; expanded customers count; events without one are counted, not named")
    func filters() async throws {
        try await StripeLoopback.run { loop in
            await loop.simulator.setEvents([
                event(1, type: "customer.subscription.deleted", customer: "cus_deleted"),
                event(2, type: "charge.refunded", customer: "cus_refunded"),
                SimulatedStripeEvent(
                    id: "evt_3", type: "customer.subscription.paused", created: since.addingTimeInterval(300),
                    customer: "cus_expanded", expandedCustomer: true),
                SimulatedStripeEvent(id: "evt_4", type: "charge.refunded", created: since.addingTimeInterval(400), customer: nil),
                event(5, type: "customer.subscription.updated", at: -1, customer: "cus_before_window"),
                event(6, type: "customer.subscription.updated", at: 3 * 86_400, customer: "cus_at_until"),
                event(7, type: "invoice.paid", customer: "cus_invoice"),
                event(8, type: "charge.dispute.created", customer: "cus_dispute"),
                event(9, type: "customer.created", customer: "cus_new"),
                event(10, type: "customer.subscription.resumed", at: 0, customer: "cus_at_since"),
            ])
            let feed = try await loop.client.events(since: since, until: until).get()
            #expect(Set(feed.customerIDs) == ["cus_deleted", "cus_refunded", "cus_expanded", "cus_at_since"])
            #expect(feed.customerIDs.count == 4)
            #expect(feed.events == 5)
            #expect(feed.withoutCustomer == 1)
            #expect(feed.pages == 1)
        }
    }

    @Test("more pages than maxEventPages is a feed error, not a partial answer")
    func pageCap() async throws {
        try await StripeLoopback.run(maxEventPages: 2) { loop in
            await loop.simulator.setEvents((1...201).map { event($0) })
            let result = await loop.client.events(since: since, until: until)
            #expect(result == .failure(.tooManyEventPages(2)))
            #expect(await loop.simulator.requestCount() == 2)
        }
    }

    @Test("a malformed body, a list without has_more, has_more without a last id, a non-object event and a 404 are errors")
    func malformed() async throws {
        try await StripeLoopback.run { loop in
            await loop.simulator.setEvents((1...150).map { event($0) })
            let key = StripeSimulator.eventsKey
            await loop.simulator.setFault(.malformedBody, for: key, times: 1)
            guard case .failure(.malformed) = await loop.client.events(since: since, until: until) else {
                Issue.record("malformed body accepted")
                return
            }
            await loop.simulator.setFault(
                .raw(status: 200, headers: [:], body: Data(#"{"object":"list","data":[]}"#.utf8)), for: key, times: 1)
            guard case .failure(.malformed) = await loop.client.events(since: since, until: until) else {
                Issue.record("list without has_more accepted")
                return
            }
            let noID =
                #"{"object":"list","has_more":true,"data":[{"object":"event","type":"charge.refunded","data":{"object":{"customer":"cus_x"}}}]}"#
            await loop.simulator.setFault(.raw(status: 200, headers: [:], body: Data(noID.utf8)), for: key, times: 1)
            guard case .failure(.malformed) = await loop.client.events(since: since, until: until) else {
                Issue.record("has_more without a cursor accepted")
                return
            }
            let notAnObject = #"{"object":"list","has_more":false,"data":[42]}"#
            await loop.simulator.setFault(.raw(status: 200, headers: [:], body: Data(notAnObject.utf8)), for: key, times: 1)
            guard case .failure(.malformed) = await loop.client.events(since: since, until: until) else {
                Issue.record("an element that is not an object accepted")
                return
            }
            // Without faults the same events read fine; a 404 (even Stripe's resource_missing) is an error, never an
            // empty feed.
            let unfaulted = try await loop.client.events(since: since, until: until).get()
            #expect(unfaulted.events == 150)
            await loop.simulator.setFault(
                .raw(status: 404, headers: [:], body: Data(#"{"error":{"type":"invalid_request_error","code":"resource_missing"}}"#.utf8)),
                for: key, times: 1)
            guard case .failure(.request(let text)) = await loop.client.events(since: since, until: until) else {
                Issue.record("404 accepted")
                return
            }
            #expect(text.hasPrefix("HTTP 404"))
        }
    }

    @Test("lenient fields: odd types and huge numbers are unknown, never a trap; customer objects and strings both name")
    func lenient() throws {
        let body = #"""
            {"object":"list","has_more":false,"data":[
              {"id":"evt_a","object":"event","type":"charge.refunded","created":1e300,"livemode":"yes","data":{"object":{"id":"ch_1","object":"charge","customer":{"id":"cus_obj","object":"customer"}}}},
              {"id":"evt_b","type":5,"created":"1780000001","data":{"object":{"object":"subscription","customer":"cus_str"}}},
              {"id":"evt_c","created":-5,"data":{"object":"not an object"}},
              {"id":"evt_d","data":{"object":{"customer":""}}},
              {"id":null}
            ]}
            """#
        let list = try StripeEventList.decode(body: Data(body.utf8))
        #expect(list.data.map(\.customer) == ["cus_obj", "cus_str", nil, nil, nil])
        #expect(list.data[0].created == nil)
        #expect(list.data[0].livemode == nil)
        #expect(list.data[1].type == nil)
        #expect(list.data[1].created == Date(timeIntervalSince1970: 1_780_000_001))
        #expect(list.data[2].created == nil)
        #expect(list.data[4].id == nil)
        #expect(list.hasMore == false)
    }

    @Test("5xx is retried up to maxAttempts, then the feed fails; 5xx then 200 succeeds")
    func serverErrors() async throws {
        try await StripeLoopback.run(maxAttempts: 3) { loop in
            await loop.simulator.setEvents([event(1)])
            await loop.simulator.setFault(.status(503), for: StripeSimulator.eventsKey, times: 3)
            guard case .failure(let error) = await loop.client.events(since: since, until: until) else {
                Issue.record("succeeded")
                return
            }
            #expect(error.description == "gave up after 3 attempts: HTTP 503")
            #expect(!error.description.contains(StripeLoopback.apiKey))
            await loop.simulator.setFault(.status(500), for: StripeSimulator.eventsKey, times: 1)
            let after500 = try await loop.client.events(since: since, until: until).get()
            #expect(after500.customerIDs == ["cus_1"])
            #expect(loop.observer.statuses == [503, 503, 503, 500, 200])
        }
    }

    @Test("429 is waited out then answered; 429 forever fails the feed once the budget is spent")
    func rateLimited() async throws {
        try await StripeLoopback.run(rateLimitBudget: .milliseconds(300)) { loop in
            await loop.simulator.setEvents([event(1)])
            await loop.simulator.setFault(.rateLimited, for: StripeSimulator.eventsKey, times: 2)
            let after429 = try await loop.client.events(since: since, until: until).get()
            #expect(after429.customerIDs == ["cus_1"])
            #expect(await loop.simulator.rateLimitedCount() == 2)
            await loop.simulator.setFault(.rateLimited, for: StripeSimulator.eventsKey)
            guard case .failure(let error) = await loop.client.events(since: since, until: until) else {
                Issue.record("succeeded")
                return
            }
            #expect(error.description.contains("rate limited (HTTP 429)"))
        }
    }
}

/// `charge.refunded` events as refunds the feed states (CONTRACT "Finance figures").
@Suite("Stripe charge.refunded events state refunds")
struct StripeChargeRefundedTests {
    /// One `charge.refunded` event whose `data.object` is `charge` (JSON object text).
    static func decode(_ charge: String, type: String = "charge.refunded", livemode: String = "true") throws -> StripeEvent {
        let body = """
            {"object":"list","url":"/v1/events","has_more":false,"data":[{"id":"evt_r","object":"event","created":1780000100,
             "livemode":\(livemode),"type":"\(type)","data":{"object":\(charge),"previous_attributes":{"refunded":false}}}]}
            """
        return try #require(try StripeEventList.decode(body: Data(body.utf8)).data.first)
    }

    static func refund(_ event: StripeEvent) throws -> SeenRefund {
        let fact = try #require(event.refundedPurchase)
        let refunds = SeenRefund.of([fact], asOf: Date(timeIntervalSince1970: 1_790_000_000))
        try #require(refunds.count == 1)
        return refunds[0]
    }

    @Test("a fully refunded charge with a payment intent: keyed by pi_, amount_refunded in USD cents, dated by its succeeded refund")
    func fullRefund() throws {
        let event = try Self.decode(
            #"{"id":"ch_1","object":"charge","customer":"cus_1","amount":1999,"amount_refunded":1999,"currency":"usd","#
                + #""refunded":true,"payment_intent":"pi_1","livemode":true,"refunds":{"object":"list","data":["#
                + #"{"id":"re_0","object":"refund","created":1780000050,"status":"failed"},"#
                + #"{"id":"re_1","object":"refund","created":1780000090,"status":"succeeded"},"#
                + #"{"id":"re_2","object":"refund","created":1780000095,"status":"pending"}]}}"#)
        let refund = try Self.refund(event)
        #expect(refund.store == "stripe")
        #expect(refund.transactionID == "pi_1")
        #expect(refund.amount == Decimal(string: "19.99") && refund.currency == "USD")
        #expect(refund.refundedAt == Date(timeIntervalSince1970: 1_780_000_090), "the latest succeeded refund, not a failed or pending one")
        #expect(event.refundedPurchase?.isSandbox == false)
        #expect(event.customer == "cus_1")
        // A refunds list with an element that is not a refund cannot be read (as in the lookup): the event's own time.
        let unreadable = try Self.decode(
            #"{"id":"ch_1","object":"charge","customer":"cus_1","amount":1999,"amount_refunded":1999,"currency":"usd","#
                + #""refunded":true,"payment_intent":"pi_1","refunds":{"object":"list","data":["#
                + #"{"id":"re_1","object":"refund","created":1780000090,"status":"succeeded"}, 7]}}"#)
        #expect(try Self.refund(unreadable).refundedAt == Date(timeIntervalSince1970: 1_780_000_100))
    }

    @Test("without a payment intent the charge id keys it; without a refunds list the event's created dates it")
    func chargeKeyAndEventDate() throws {
        let event = try Self.decode(
            #"{"id":"ch_2","object":"charge","customer":{"id":"cus_2","object":"customer"},"amount_refunded":500,"#
                + #""currency":"eur","refunded":true,"payment_intent":null}"#)
        let refund = try Self.refund(event)
        #expect(refund.transactionID == "ch_2")
        #expect(refund.refundedAt == Date(timeIntervalSince1970: 1_780_000_100))
        #expect(refund.amount == 5 && refund.currency == "EUR")
        let expanded = try Self.decode(
            #"{"id":"ch_3","object":"charge","customer":"cus_3","amount_refunded":500,"currency":"eur","refunded":true,"#
                + #""payment_intent":{"id":"pi_3","object":"payment_intent"}}"#)
        #expect(try Self.refund(expanded).transactionID == "pi_3", "an expanded payment intent's id")
    }

    @Test("JPY has no minor unit and KWD three: amounts exact in the currency's exponent")
    func zeroAndThreeDecimalCurrencies() throws {
        let yen = try Self.decode(
            #"{"id":"ch_y","object":"charge","customer":"cus_y","amount_refunded":1200,"currency":"jpy","refunded":true}"#)
        #expect(try Self.refund(yen).amount == 1200)
        #expect(try Self.refund(yen).currency == "JPY")
        let dinar = try Self.decode(
            #"{"id":"ch_k","object":"charge","customer":"cus_k","amount_refunded":3250,"currency":"kwd","refunded":true}"#)
        #expect(try Self.refund(dinar).amount == Decimal(string: "3.25"))
        #expect(try Self.refund(dinar).currency == "KWD")
        let unknownCurrency = try Self.decode(
            #"{"id":"ch_u","object":"charge","customer":"cus_u","amount_refunded":3250,"currency":"dollars","refunded":true}"#)
        #expect(try Self.refund(unknownCurrency).amount == nil, "an unknown currency leaves the amount unknown")
    }

    @Test("a partial refund, a missing or non-boolean refunded, another event type or object states no refund")
    func notARefund() throws {
        let partial = try Self.decode(
            #"{"id":"ch_p","object":"charge","customer":"cus_p","amount":1999,"amount_refunded":500,"currency":"usd","refunded":false}"#)
        #expect(partial.refundedPurchase == nil)
        #expect(partial.customer == "cus_p", "still names its customer")
        let missing = try Self.decode(
            #"{"id":"ch_m","object":"charge","customer":"cus_m","amount_refunded":1999,"currency":"usd"}"#)
        #expect(missing.refundedPurchase == nil)
        let text = try Self.decode(
            #"{"id":"ch_t","object":"charge","customer":"cus_t","amount_refunded":1999,"currency":"usd","refunded":"true"}"#)
        #expect(text.refundedPurchase == nil)
        let otherType = try Self.decode(
            #"{"id":"ch_o","object":"charge","customer":"cus_o","amount_refunded":1999,"currency":"usd","refunded":true}"#,
            type: "charge.succeeded")
        #expect(otherType.refundedPurchase == nil)
        let notCharge = try Self.decode(#"{"id":"sub_1","object":"subscription","customer":"cus_s","refunded":true}"#)
        #expect(notCharge.refundedPurchase == nil)
        let noID = try Self.decode(#"{"object":"charge","customer":"cus_n","refunded":true,"amount_refunded":1,"currency":"usd"}"#)
        #expect(noID.refundedPurchase == nil, "neither a payment intent nor a charge id: no key")
    }

    @Test("a test-mode charge is a sandbox refund; a hostile refunds list decodes leniently")
    func sandboxAndHostile() throws {
        let test = try Self.decode(
            #"{"id":"ch_s","object":"charge","customer":"cus_s","amount_refunded":100,"currency":"usd","refunded":true,"livemode":false}"#)
        #expect(test.refundedPurchase?.isSandbox == true)
        let eventMode = try Self.decode(
            #"{"id":"ch_e","object":"charge","customer":"cus_e","amount_refunded":100,"currency":"usd","refunded":true}"#,
            livemode: "false")
        #expect(eventMode.refundedPurchase?.isSandbox == true, "the event's livemode when the charge does not say")
        let hostile = try Self.decode(
            #"{"id":"ch_h","object":"charge","customer":"cus_h","amount_refunded":-5,"currency":"usd","refunded":true,"#
                + #""refunds":{"data":"x"}}"#)
        #expect(try Self.refund(hostile).amount == nil, "a negative amount is unknown")
        let huge = try Self.decode(
            #"{"id":"ch_x","object":"charge","customer":"cus_x","amount_refunded":9000000000000000000,"currency":"usd","refunded":true}"#)
        #expect(try Self.refund(huge).amount == nil, "beyond the range the lookup accepts: unknown")
        let weird = try Self.decode(
            #"{"id":"ch_w","object":"charge","customer":"cus_w","refunded":true,"refunds":{"data":[null,"x",[1],{"created":1e300,"status":"succeeded"}]}}"#
        )
        #expect(try Self.refund(weird).refundedAt == Date(timeIntervalSince1970: 1_780_000_100))
    }

    @Test("the feed over loopback lists the refunds of fully refunded charges with their customer; guest charges name none")
    func feedOverLoopback() async throws {
        try await StripeLoopback.run { loop in
            await loop.simulator.setEvents([
                SimulatedStripeEvent(
                    id: "evt_full", type: "charge.refunded", created: since.addingTimeInterval(60), customer: "cus_f",
                    amountRefunded: 500, currency: "jpy", paymentIntent: "pi_f", refundCreated: since.addingTimeInterval(30)),
                SimulatedStripeEvent(
                    id: "evt_partial", type: "charge.refunded", created: since.addingTimeInterval(70), customer: "cus_p",
                    refunded: false, amountRefunded: 100),
                SimulatedStripeEvent(id: "evt_guest", type: "charge.refunded", created: since.addingTimeInterval(80), customer: nil),
            ])
            let feed = try await loop.client.events(since: since, until: until).get()
            #expect(feed.events == 3)
            #expect(feed.refunds.map(\.customer) == ["cus_f"])
            let refund = try #require(SeenRefund.of(feed.refunds.map(\.purchase), asOf: until).first)
            #expect(refund.transactionID == "pi_f" && refund.amount == 500 && refund.currency == "JPY")
            #expect(refund.refundedAt == since.addingTimeInterval(30))
        }
    }
}
