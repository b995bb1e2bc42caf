import Foundation
import SubreconCore

// Stripe's Checkout Sessions (`GET /v1/checkout/sessions?customer=…`, `expand[]=data.line_items`) and their line
// items (`GET /v1/checkout/sessions/{id}/line_items`): how a customer paid for a one-time price (CONTRACT "Sources and the decision"). Decoded
// leniently like every Stripe object (`StripeWire.swift`): a missing, null or mistyped field is nil, timestamps are
// strict (`unusableDates`). Foundation and SubreconCore only: `scripts/fuzz` compiles it into the fuzz target.

public typealias StripeCheckoutSessionList = StripeList<StripeCheckoutSession>

/// One Checkout Session (`"object": "checkout.session"`).
public struct StripeCheckoutSession: Decodable, Sendable, Hashable, StripeCustomerExpandable {
    public var id: String?
    public var customer: String?
    /// `payment` (one-time prices), `subscription` or `setup`.
    public var mode: String?
    /// `open`, `complete` or `expired`.
    public var status: String?
    /// `paid`, `unpaid` or `no_payment_required`.
    public var paymentStatus: String?
    public var livemode: Bool?
    public var created: Date?
    /// The payment intent (`pi_…`) that paid the session, or the `id` of an expanded one.
    public var paymentIntent: String?
    public var currency: String?
    /// nil when `line_items` was not expanded (or not a list).
    public var lineItems: [StripeLineItem]?
    /// The embedded `line_items` list's `has_more`; nil when not stated (the client then reads them all).
    public var lineItemsHaveMore: Bool?
    public var unusableDates: [String] = []
    /// The session's own `metadata.user_id` (`StripeAccount`).
    public var metadataUserID: String?
    /// `client_reference_id`: where Stripe's docs tell an app to put its user id.
    public var clientReferenceID: String?
    /// The expanded customer's `metadata.user_id` (`expand[]=data.customer`); nil when not expanded or not stated.
    public var customerUserID: String?
    /// `customer` came as a bare id string (`"cus_…"`), not the object.
    public var customerIsBareID = false
    /// Read from an answer that asked for the customer expanded (`StripeCustomerExpandable`): a bare id then leaves
    /// the buyer unknown (`statedBuyer`).
    public var customerExpansionAsked = false

    /// The buyer Stripe states for the payment (CONTRACT "Whose purchase it is"): the session's `metadata.user_id`,
    /// else its `client_reference_id`, else its customer's `metadata.user_id` (a blank one names nobody, so the next is
    /// read); unknown when the customer, asked for expanded, came as a bare id.
    public var statedBuyer: StripeStatedBuyer {
        StripeAccount.buyer(
            own: [metadataUserID, clientReferenceID], customer: customer, customerUserID: customerUserID,
            unexpanded: customerExpansionAsked && customerIsBareID)
    }

    /// The stated account; nil when nobody is stated or the buyer is unknown (`statedBuyer` tells them apart).
    public var accountToken: String? { statedBuyer.account }

    public init(
        id: String?, customer: String? = nil, mode: String? = "payment", status: String? = "complete",
        paymentStatus: String? = "paid", livemode: Bool? = true, created: Date? = nil, paymentIntent: String? = nil,
        currency: String? = "usd", lineItems: [StripeLineItem]?, lineItemsHaveMore: Bool? = false
    ) {
        self.id = id
        self.customer = customer
        self.mode = mode
        self.status = status
        self.paymentStatus = paymentStatus
        self.livemode = livemode
        self.created = created
        self.paymentIntent = paymentIntent
        self.currency = currency
        self.lineItems = lineItems
        self.lineItemsHaveMore = lineItemsHaveMore
    }

    enum CodingKeys: String, CodingKey {
        case id, customer, mode, status, livemode, created, currency, metadata
        case clientReferenceID = "client_reference_id"
        case paymentStatus = "payment_status"
        case paymentIntent = "payment_intent"
        case lineItems = "line_items"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = container.lenientString(.id)
        customer = container.lenientID(.customer)
        metadataUserID = StripeAccount.userID(in: container, forKey: .metadata)
        clientReferenceID = StripeAccount.account(container.lenientString(.clientReferenceID))
        customerUserID = StripeAccount.customerUserID(in: container, forKey: .customer)
        customerIsBareID = StripeAccount.isBareID(in: container, forKey: .customer)
        mode = container.lenientString(.mode)
        status = container.lenientString(.status)
        paymentStatus = container.lenientString(.paymentStatus)
        livemode = container.lenientBool(.livemode)
        var unusable: [String] = []
        created = container.timestamp(.created, unusable: &unusable)
        unusableDates = unusable
        paymentIntent = container.lenientID(.paymentIntent)
        currency = container.lenientString(.currency)
        (lineItems, lineItemsHaveMore) = container.embeddedList(.lineItems, of: StripeLineItem.self) ?? (nil, nil)
    }
}

/// One line item of a Checkout Session (`"object": "item"`).
public struct StripeLineItem: Decodable, Sendable, Hashable {
    public var id: String?
    public var price: StripePrice?
    public var quantity: Int64?
    /// What was paid for the line, in minor units of `currency`.
    public var amountTotal: Int64?
    public var currency: String?

    public init(id: String?, price: StripePrice?, quantity: Int64? = 1, amountTotal: Int64? = nil, currency: String? = "usd") {
        self.id = id
        self.price = price
        self.quantity = quantity
        self.amountTotal = amountTotal
        self.currency = currency
    }

    enum CodingKeys: String, CodingKey {
        case id, price, quantity, currency
        case amountTotal = "amount_total"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = container.lenientString(.id)
        price = try? container.decodeIfPresent(StripePrice.self, forKey: .price)
        quantity = container.lenientInteger(.quantity)
        amountTotal = container.lenientInteger(.amountTotal)
        currency = container.lenientString(.currency)
    }
}
