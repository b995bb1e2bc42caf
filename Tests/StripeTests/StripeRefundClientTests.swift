import Foundation
import StoreSimulator
import SubreconCore
import SubreconTestSupport
import Testing

@testable import Stripe

/// The refund lookups against the loopback simulator: expansion, listing, charges, faults.
@Suite("Stripe refund lookups against the loopback simulator")
struct StripeRefundClientTests {
    static let start = StripeLoopback.start

    /// A subscription whose latest invoice `in_<name>` was paid by `pi_<name>` (or a plain charge), and that charge.
    static func seed(
        _ loop: StripeLoopback, _ name: String, status: String = "active", refunded: Int64 = 999, expandable: Bool = true,
        chargeOnly: Bool = false, refunds: [SimulatedStripeRefund]? = nil
    ) async {
        var subscription = StripeLoopback.subscription("sub_\(name)", status: status)
        var invoice = SimulatedStripeInvoice.paid(
            id: "in_\(name)", amount: 999, currency: "eur", paymentIntent: "pi_\(name)", created: start)
        invoice.expandable = expandable
        if chargeOnly {
            invoice.payments = [
                SimulatedStripeInvoicePayment(id: "inpay_\(name)", target: .charge("ch_\(name)"), amountPaid: 999, currency: "eur")
            ]
        }
        subscription.latestInvoice = invoice
        await loop.simulator.setSubscriptions([subscription], forCustomer: "cus_\(name)")
        await loop.simulator.addCharges([
            SimulatedStripeCharge(
                id: "ch_\(name)", paymentIntentID: chargeOnly ? nil : "pi_\(name)", amount: 999, amountRefunded: refunded,
                currency: "eur", created: start,
                refunds: refunds
                    ?? (refunded > 0
                        ? [SimulatedStripeRefund(id: "re_\(name)", amount: refunded, created: start.addingTimeInterval(3600))] : []))
        ])
    }

    static func refunds(_ loop: StripeLoopback, _ customer: String) async throws -> Result<[String: StripePeriodRefund], SourceError> {
        let subscriptions = try await loop.client.subscriptions(customerID: customer).get()
        return await loop.client.periodRefunds(of: subscriptions)
    }

    @Test("a fully refunded period through the expanded invoice: one charges call with refunds expanded")
    func expanded() async throws {
        try await StripeLoopback.run { loop in
            await Self.seed(loop, "full")
            let refunds = try await Self.refunds(loop, "cus_full").get()
            #expect(
                refunds == [
                    "sub_full": StripePeriodRefund(
                        refundedAt: Self.start.addingTimeInterval(3600), price: Money(amount: Decimal(string: "9.99")!, currency: "EUR"),
                        transactionID: "pi_full")
                ])
            let requests = await loop.simulator.recordedRequests()
            #expect(requests.map(\.path) == ["/v1/subscriptions", "/v1/charges"])
            #expect(requests[0].query["expand[]"] == "data.latest_invoice.payments")
            #expect(requests[1].query["payment_intent"] == "pi_full" && requests[1].query["expand[]"] == "data.refunds")
            #expect(loop.observer.statuses == [200, 200], "the extra request is counted like the others")
        }
    }

    @Test("a latest invoice given as an id: its payments are listed; a charge payment is retrieved by id")
    func listedAndRetrieved() async throws {
        try await StripeLoopback.run { loop in
            await Self.seed(loop, "plain", expandable: false, chargeOnly: true)
            let refunds = try await Self.refunds(loop, "cus_plain").get()
            #expect(refunds["sub_plain"]?.transactionID == "ch_plain")
            let requests = await loop.simulator.recordedRequests()
            #expect(requests.map(\.path) == ["/v1/subscriptions", "/v1/invoice_payments", "/v1/charges/ch_plain"])
            #expect(requests[1].query["invoice"] == "in_plain" && requests[2].query["expand[]"] == "refunds")
        }
    }

    @Test("by id: GET /v1/subscriptions/{id} expands latest_invoice.payments")
    func byID() async throws {
        try await StripeLoopback.run { loop in
            await Self.seed(loop, "one")
            let subscription = try #require(try await loop.client.subscription(id: "sub_one").get())
            #expect(subscription.latestInvoice?.payments?.data.first?.paymentIntent == "pi_one")
            let refunds = await loop.client.periodRefunds(of: [subscription])
            #expect(try refunds.get()["sub_one"]?.transactionID == "pi_one")
            #expect(await loop.simulator.recordedRequests().first?.query["expand[]"] == "latest_invoice.payments")
        }
    }

    @Test("a partial refund is no period refund; a canceled subscription and a plan change's invoice ask nothing more")
    func partialAndCanceled() async throws {
        try await StripeLoopback.run { loop in
            await Self.seed(loop, "upgrade")
            var upgraded = StripeLoopback.subscription("sub_upgrade")
            upgraded.latestInvoice = .paid(id: "in_upgrade", amount: 999, currency: "eur", paymentIntent: "pi_upgrade", created: Self.start)
            upgraded.latestInvoice?.billingReason = "subscription_update"
            await loop.simulator.setSubscriptions([upgraded], forCustomer: "cus_upgrade")
            let upgrade = try await Self.refunds(loop, "cus_upgrade").get()
            let asked = await loop.simulator.requestCount()
            #expect(upgrade.isEmpty && asked == 1, "a refunded proration invoice is not the period's")
            await Self.seed(loop, "partial", refunded: 300)
            let partial = try await Self.refunds(loop, "cus_partial").get()
            #expect(partial.isEmpty)
            await Self.seed(loop, "gone", status: "canceled")
            let before = await loop.simulator.requestCount()
            let gone = try await Self.refunds(loop, "cus_gone").get()
            #expect(gone.isEmpty)
            #expect(await loop.simulator.requestCount() == before + 1, "only the subscriptions list")
        }
    }

    @Test("500 on the charges call, 500 on the invoice payments call, an unknown charge and a refund without a date are errors")
    func failures() async throws {
        try await StripeLoopback.run(maxAttempts: 2) { loop in
            await Self.seed(loop, "c500")
            await loop.simulator.setFault(.status(500), for: "pi_c500")
            guard case .failure(let error) = try await Self.refunds(loop, "cus_c500") else {
                Issue.record("succeeded")
                return
            }
            #expect(error.origin == .stripe && error.message.contains("HTTP 500"), "\(error.message)")

            await Self.seed(loop, "p500", expandable: false)
            await loop.simulator.setFault(.status(500), for: "in_p500")
            guard case .failure(let listing) = try await Self.refunds(loop, "cus_p500") else {
                Issue.record("succeeded")
                return
            }
            #expect(listing.message.contains("HTTP 500"))

            await Self.seed(loop, "nocharge", chargeOnly: true)
            await loop.simulator.setCharges([])
            guard case .failure(let missing) = try await Self.refunds(loop, "cus_nocharge") else {
                Issue.record("succeeded")
                return
            }
            #expect(missing.message.contains("HTTP 404"), "a charge the invoice names and Stripe does not know is no absence")

            await Self.seed(loop, "undated", refunds: [SimulatedStripeRefund(id: "re_u", amount: 999, created: nil)])
            guard case .failure(let undated) = try await Self.refunds(loop, "cus_undated") else {
                Issue.record("succeeded")
                return
            }
            #expect(undated.message.contains("no succeeded refund states when"))

            await Self.seed(loop, "garbled")
            await loop.simulator.setFault(.malformedBody, for: "pi_garbled")
            guard case .failure(let garbled) = try await Self.refunds(loop, "cus_garbled") else {
                Issue.record("succeeded")
                return
            }
            #expect(garbled.message.contains("malformed"))
            #expect(!"\(error.message)\(listing.message)\(missing.message)".contains(StripeLoopback.apiKey))
        }
    }

    @Test("charges are read page by page, capped by maxPages")
    func chargePages() async throws {
        try await StripeLoopback.run(maxPages: 2) { loop in
            await Self.seed(loop, "many", refunded: 0)
            let failed = (0..<150).map {
                SimulatedStripeCharge(
                    id: "ch_failed\($0)", paymentIntentID: "pi_many", amount: 999, status: "failed",
                    created: Self.start.addingTimeInterval(Double(-$0 - 1)))
            }
            await loop.simulator.addCharges(failed)
            let many = try await Self.refunds(loop, "cus_many").get()
            #expect(many.isEmpty)
            #expect(await loop.simulator.recordedRequests().filter { $0.path == "/v1/charges" }.count == 2)
            await loop.simulator.addCharges(
                (150..<250).map {
                    SimulatedStripeCharge(
                        id: "ch_failed\($0)", paymentIntentID: "pi_many", amount: 999, status: "failed",
                        created: Self.start.addingTimeInterval(Double(-$0 - 1)))
                })
            guard case .failure(let error) = try await Self.refunds(loop, "cus_many") else {
                Issue.record("succeeded")
                return
            }
            #expect(error.message.contains("more than 2 pages of charges"))
        }
    }
}

extension StripeRefundClientTests {
    @Test("a refunded charge whose expanded refunds are cut (more than 10) has them listed: the succeeded one further on dates it")
    func refundsListed() async throws {
        try await StripeLoopback.run { loop in
            let older = [
                SimulatedStripeRefund(id: "re_ok1", amount: 500, created: Self.start.addingTimeInterval(100)),
                SimulatedStripeRefund(id: "re_ok2", amount: 499, created: Self.start.addingTimeInterval(200)),
            ]
            let failed = (0..<10).map {
                SimulatedStripeRefund(
                    id: "re_failed\($0)", amount: 999, created: Self.start.addingTimeInterval(Double(1000 + $0)), status: "failed")
            }
            await Self.seed(loop, "cut", refunds: older + failed)
            let refunds = try await Self.refunds(loop, "cus_cut").get()
            #expect(refunds["sub_cut"]?.refundedAt == Self.start.addingTimeInterval(200))
            let requests = await loop.simulator.recordedRequests()
            #expect(requests.map(\.path) == ["/v1/subscriptions", "/v1/charges", "/v1/refunds"])
            #expect(requests.last?.query["charge"] == "ch_cut")

            await loop.simulator.setFault(.status(500), for: StripeSimulator.refundsKey(charge: "ch_cut"))
            guard case .failure(let error) = try await Self.refunds(loop, "cus_cut") else {
                Issue.record("succeeded")
                return
            }
            #expect(error.message.contains("HTTP 500"))
        }
    }
}
