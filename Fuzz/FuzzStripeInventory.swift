// 'I': one page of the Stripe inventory (`GET /v1/subscriptions?status=…&expand[]=data.customer`), decoded strictly
// (`StripeInventoryPage`) -> the purchases it states, with their customers and accounts (CONTRACT "Which users a run asks about", "Whose purchase it is"). Never
// traps; a page that decodes has an id and a customer on every element; every stated purchase names a listed customer;
// an account is 1...500 characters; decoded text holds no NUL.
import Foundation
import SubreconCore

@Sendable func stripeInventoryPage(_ body: Data) {
    guard let list = try? StripeInventoryPage.decode(body: body) else { return }
    let customers = Set(list.data.compactMap(\.customer))
    for subscription in list.data {
        precondition(subscription.id?.isEmpty == false, "an inventory element without an id was believed")
        precondition(subscription.customer?.isEmpty == false, "an inventory element without a customer was believed")
        check(subscription.id, "inventory subscription id")
        check(subscription.customer, "inventory customer")
        for account in [subscription.metadataUserID, subscription.customerUserID, subscription.accountToken] {
            check(account, "inventory account")
            if let account { precondition((1...StripeAccount.maxLength).contains(account.count), "an account out of bounds") }
        }
    }
    for stated in StripeInventoryPage.purchases(list.data) {
        precondition(customers.contains(stated.customer), "a purchase of a customer the page does not list")
        precondition(stated.purchase.origin == .stripe, "an inventory purchase of another source")
        check(stated.purchase.accountToken, "inventory purchase account")
        check(stated.purchase.expiresDate, "inventory purchase expiry")
    }
}
