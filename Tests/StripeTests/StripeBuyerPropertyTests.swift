import Foundation
import PropertyBased
import SubreconCore
import Testing

@testable import Stripe

/// Every fact a Stripe answer maps to states its buyer (CONTRACT "Whose purchase it is"). A one-time payment's
/// Checkout Session names it by its own `metadata.user_id`, else its `client_reference_id`, else its expanded
/// customer's `metadata.user_id`; kept exactly (case included), blank or unreadable is `unstated`.
@Suite("Stripe: every one-time fact states its buyer")
struct StripeBuyerPropertyTests {
    static let values: [String?] = [nil, "null", #""""#, #""  ""#, "7", #""u-1""#, #""U-1""#]

    static func text(_ value: String?) -> String? {
        guard let value, let text = try? JSONDecoder().decode(String.self, from: Data(value.utf8)) else { return nil }
        return StripeAccount.account(text).flatMap(normalisedIdentifier)
    }

    static func session(metadata: String?, reference: String?, customer: String?) -> String {
        let customerJSON = customer.map { #"{"id": "cus_1", "object": "customer", "metadata": {"user_id": \#($0)}}"# } ?? #""cus_1""#
        let metadataJSON = metadata.map { #", "metadata": {"user_id": \#($0)}"# } ?? ""
        let referenceJSON = reference.map { #", "client_reference_id": \#($0)"# } ?? ""
        return #"""
            {"id": "cs_1", "object": "checkout.session", "customer": \#(customerJSON), "mode": "payment", "status": "complete",
             "payment_status": "paid", "livemode": true, "created": 1780000000, "payment_intent": "pi_1", "currency": "usd"\#(metadataJSON)\#(referenceJSON),
             "line_items": {"object": "list", "has_more": false, "data": [{"id": "li_1", "amount_total": 4999, "currency": "usd",
               "price": {"id": "price_1", "product": "prod_life", "type": "one_time"}}]}}
            """#
    }

    @Test("property: the session's metadata, then client_reference_id, then its customer's metadata decide the buyer")
    func sessions() async {
        let range = 0...(Self.values.count - 1)
        await propertyCheck(count: 400, input: Gen.int(in: range), Gen.int(in: range), Gen.int(in: range)) { m, r, c in
            let (metadata, reference, customer) = (Self.values[m], Self.values[r], Self.values[c])
            let body = Self.session(metadata: metadata, reference: reference, customer: customer)
            guard let session = try? JSONDecoder().decode(StripeCheckoutSession.self, from: Data(body.utf8)),
                case .success(let facts) = StripeOneTimeMapping.storeFacts(session, refund: nil), facts.count == 1
            else {
                Issue.record("the session did not map: \(body)")
                return
            }
            let named = Self.text(metadata) ?? Self.text(reference) ?? Self.text(customer)
            let expected: Buyer = named.map { .stated($0, store: .stripe) } ?? .unstated
            #expect(facts[0].purchase.buyer == expected, "\(body)")
            #expect(facts[0].purchase.buyer.account?.ignoresCase != true, "only Apple's token ignores case")
        }
    }

    @Test(
        "property: read from an answer that asked for the customer expanded, a bare customer id leaves the buyer unknown (a fetch error) unless the session names one"
    )
    func sessionsAskedExpanded() async {
        let range = 0...(Self.values.count - 1)
        await propertyCheck(count: 400, input: Gen.int(in: range), Gen.int(in: range), Gen.int(in: range)) { m, r, c in
            let (metadata, reference, customer) = (Self.values[m], Self.values[r], Self.values[c])
            let body = Self.session(metadata: metadata, reference: reference, customer: customer)
            guard var session = try? JSONDecoder().decode(StripeCheckoutSession.self, from: Data(body.utf8)) else {
                Issue.record("the session did not decode: \(body)")
                return
            }
            session.customerExpansionAsked = true
            let mapped = StripeOneTimeMapping.storeFacts(session, refund: nil)
            let own = Self.text(metadata) ?? Self.text(reference)
            if own == nil, customer == nil {
                guard case .failure(let error) = mapped else {
                    Issue.record("an unexpanded customer was read as \(mapped): \(body)")
                    return
                }
                #expect(error.kind == .fetch && error.message.contains("bare id"))
            } else {
                let named = own ?? Self.text(customer)
                let expected: Buyer = named.map { .stated($0, store: .stripe) } ?? .unstated
                #expect((try? mapped.get())?.map(\.purchase.buyer) == [expected], "\(body)")
            }
        }
    }
}
