import Foundation
import SourceHTTP
import StoreSimulator
import Testing

@testable import Stripe

/// `subrecon doctor`'s Stripe reads (docs/CONTRACT.md, "subrecon doctor") against the simulator, which answers a
/// restricted key's missing permission with Stripe's own 403 message (`restrictKey`).
@Suite("The Stripe doctor reads")
struct StripeCredentialCheckTests {
    /// The key's last four characters, which Stripe's messages repeat: never in a line.
    static let keyTail = String(StripeLoopback.apiKey.suffix(4))

    @Test("a key that reads every list: each asked once with GET limit=1, the bearer key and the pinned Stripe-Version")
    func keyHolds() async throws {
        try await StripeLoopback.run { loop in
            let check = await loop.client.credentialCheck()
            #expect(check.outcome == .holds, "\(check)")
            #expect(check.subject == "stripe")
            #expect(
                check.text.contains(
                    "a secret key (test mode), reads subscriptions, invoices, charges, refunds, checkout sessions and events"))
            let requests = await loop.simulator.recordedRequests()
            #expect(requests.map(\.path) == StripeClient.probes.map { String($0.path.split(separator: "?")[0]) })
            for request in requests {
                #expect(request.query["limit"] == "1")
                #expect(request.headers["authorization"] == "Bearer \(StripeLoopback.apiKey)")
                #expect(request.headers["stripe-version"] == StripeConfiguration.pinnedAPIVersion)
            }
            #expect(!check.text.contains(Self.keyTail))
        }
    }

    @Test("a restricted key without read access to checkout sessions: 78 naming them and Stripe's permission, never the key")
    func missingOnePermission() async throws {
        try await StripeLoopback.run { loop in
            await loop.simulator.restrictKey(denying: [.checkoutSessions])
            let check = await loop.client.credentialCheck()
            #expect(check.outcome == .misconfigured, "\(check)")
            #expect(
                check.text.contains(
                    "a restricted key without read access to checkout sessions ('rak_checkout_session_read') (HTTP 403)"))
            #expect(!check.text.contains(Self.keyTail) && !check.text.contains("*"), "Stripe's message masks the key; not repeated")
            #expect(await loop.simulator.recordedRequests().count == StripeClient.probes.count, "every list asked")
        }
    }

    @Test("several missing permissions are all named, in the order the night reads them")
    func missingSeveral() async throws {
        try await StripeLoopback.run { loop in
            await loop.simulator.restrictKey(denying: [.events, .invoices])
            let check = await loop.client.credentialCheck()
            #expect(check.outcome == .misconfigured, "\(check)")
            #expect(check.text.contains("invoices ('rak_invoice_read') and events ('rak_event_read')"))
        }
    }

    @Test("a 403 whose message names no permission says so (no permission guessed)")
    func unnamedPermission() async throws {
        try await StripeLoopback.run { loop in
            let body = Data(#"{"error":{"type":"invalid_request_error","message":"Forbidden."}}"#.utf8)
            await loop.simulator.setFault(.raw(status: 403, headers: [:], body: body), for: StripeSimulator.inventoryKey)
            let check = await loop.client.credentialCheck()
            #expect(check.outcome == .misconfigured, "\(check)")
            #expect(check.text.contains("read access to subscriptions (Stripe named no permission) (HTTP 403)"))
        }
    }

    @Test("a key Stripe does not take: 401 names STRIPE_API_KEY after one request")
    func wrongKey() async throws {
        try await StripeLoopback.run(apiKey: "sk_test_NotTheAccountsKey7788") { loop in
            let check = await loop.client.credentialCheck()
            #expect(check.outcome == .misconfigured, "\(check)")
            #expect(check.text.contains("GET /v1/subscriptions?limit=1&status=all answered 401: Stripe refused STRIPE_API_KEY"))
            #expect(!check.text.contains("7788"))
            #expect(await loop.simulator.recordedRequests().count == 1)
        }
    }

    @Test("a publishable key is refused before any request")
    func publishableKey() async throws {
        try await StripeLoopback.run(apiKey: "pk_test_PublishableKey0000") { loop in
            let check = await loop.client.credentialCheck()
            #expect(check.outcome == .misconfigured, "\(check)")
            #expect(check.text.hasPrefix("STRIPE_API_KEY is a publishable key (pk_…)"))
            #expect(await loop.simulator.recordedRequests().isEmpty)
        }
    }

    @Test("Stripe down (503 every time): unreachable after the retries, not a key problem")
    func down() async throws {
        try await StripeLoopback.run { loop in
            await loop.simulator.setDown(status: 503)
            let check = await loop.client.credentialCheck()
            #expect(check.outcome == .unreachable, "\(check)")
            #expect(check.text.contains("no answer about the key: gave up after 3 attempts: HTTP 503"))
        }
    }

    @Test("the permission is read only from a quoted rak_ name of letters, digits and underscores")
    func permissionParsing() {
        func body(_ message: String) -> Data {
            (try? JSONSerialization.data(withJSONObject: ["error": ["type": "invalid_request_error", "message": message]])) ?? Data()
        }
        #expect(
            StripeClient.permission(
                in: body(
                    "The provided key 'rk_test_****1234' does not have the required permissions for this endpoint on account "
                        + "'acct_1'. Having the 'rak_subscription_read' permission would allow this request to continue."))
                == "rak_subscription_read")
        #expect(StripeClient.permission(in: body("Having the 'rak_charge_read\u{1B}[2J' permission")) == nil)
        #expect(StripeClient.permission(in: body("Having the rak_charge_read permission")) == nil)
        #expect(StripeClient.permission(in: body("The provided key 'rk_test_****1234' is refused")) == nil)
        #expect(StripeClient.permission(in: Data("not json".utf8)) == nil)
    }
}
