import Foundation
import Logging
import SubreconCore

/// What reading Stripe's inventory gave (CONTRACT "Which users a run asks about"): every subscription listed `active`, `trialing` or `past_due`.
public struct StripeInventory: Sendable, Hashable {
    /// The subscriptions, once each by id, in the order read (status by status).
    public var subscriptions: [StripeSubscription] = []
    /// Pages read, over the three statuses.
    public var pages = 0

    public init() {}

    /// The customers of the subscriptions, once each, in the order read.
    public var customerIDs: [String] {
        var seen: Set<String> = []
        return subscriptions.compactMap(\.customer).filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    /// The purchases the subscriptions state (`StripeInventoryPage.purchases`).
    public var purchases: [StripeCustomerPurchase] { StripeInventoryPage.purchases(subscriptions) }
}

extension StripeClient {
    /// The statuses the inventory lists, one list call each (Stripe's `status` filter takes one value).
    public static let inventoryStatuses = ["active", "trialing", "past_due"]

    /// Every live subscription (CONTRACT "Which users a run asks about"): `GET /v1/subscriptions?status=<s>&limit=100&expand[]=data.customer` for
    /// each of `inventoryStatuses`, every page by `has_more` and `starting_after` (at most `maxInventoryPages` a
    /// status), each page strictly decoded (`StripeInventoryPage`). Any request failing, any malformed page, any list
    /// ending incomplete (`everyPage`) fails the whole inventory: it is used whole or not at all. Each request runs
    /// under the request policy's deadline. `livemode` is kept on every purchase (`false`: a sandbox purchase, never
    /// an orphan or a link of a production run). A subscription listed under two statuses (it changed between the
    /// calls) is kept once, as first read.
    public func inventory() async -> Result<StripeInventory, StripeError> {
        var inventory = StripeInventory()
        var seen: Set<String> = []
        let pageCap = configuration.maxInventoryPages
        for status in Self.inventoryStatuses {
            let base =
                "/v1/subscriptions?status=\(status)&limit=\(Self.pageSize)&\(Self.encoded("expand[]"))=\(Self.encoded("data.customer"))"
            let read = await everyPage(
                base: base, id: "inventory", what: "\(status) subscriptions",
                decode: { try StripeInventoryPage.decode(body: $0).askedCustomerExpanded() },
                elementID: \.id, maxPages: pageCap,
                tooMany: .request("more than \(pageCap) pages of \(status) subscriptions; the inventory is not used in part")
            ) { page in
                for subscription in page where seen.insert(subscription.id ?? "").inserted {
                    inventory.subscriptions.append(subscription)
                }
            }
            switch read {
            case .failure(let error): return .failure(error)
            case .success(let pages): inventory.pages += pages
            }
        }
        logger.debug(
            "stripe inventory read",
            metadata: ["stripe.subscriptions": "\(inventory.subscriptions.count)", "stripe.pages": "\(inventory.pages)"])
        return .success(inventory)
    }
}
