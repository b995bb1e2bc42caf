// 'O': a Stripe checkout sessions list (line items expanded) -> one-time purchase facts (CONTRACT "Sources and the decision"), and the body as a
// line items list. Never traps; decoded text holds no NUL, dates lie in 1970...2200, prices are not negative, and a
// fact is only ever non-expiring from Stripe.
import Foundation
import SubreconCore

@Sendable func stripeCheckoutSessions(_ body: Data) {
    _ = (try? StripeList<StripeLineItem>.decode(body: body))?.data.map { check($0.id, "line item id") }
    guard let list = try? StripeCheckoutSessionList.decode(body: body) else { return }
    for session in list.data {
        for text in [session.id, session.mode, session.status, session.paymentStatus, session.paymentIntent] {
            check(text, "checkout session text")
        }
        check(session.created, "checkout session created")
        guard case .success(true) = StripeOneTimeMapping.isPaidPayment(session) else { continue }
        switch StripeOneTimeMapping.storeFacts(session, refund: nil) {
        case .failure(let error): check(error.message, "stripe one-time error")
        case .success(let facts):
            for fact in facts {
                precondition(fact.purchase.origin == .stripe && fact.purchase.kind == .nonExpiring, "one-time fact of another kind")
                check(fact.purchase.productID, "one-time product")
                if let price = fact.purchase.price { precondition(!price.amount.isNaN && price.amount >= 0, "one-time price out of range") }
            }
        }
    }
}
