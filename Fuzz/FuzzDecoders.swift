// libFuzzer target over every decoder of source answers (built by scripts/fuzz, not by SwiftPM).
//
// The first byte of an input picks the decoder (its value mod 8; the committed corpus uses the digits '0'...'7'),
// the rest is the answer as a source would send it:
//   0 RevenueCat subscriber body       1 RevenueCat error body + a `Retry-After` value (its last line): the 429 parse
//   2 App Store status response body   3 App Store error body
//   4 decoded JWS transaction payload  5 decoded JWS renewal info payload
//   6 verifyReceipt body -> facts      7 text through SourceText / SourceNumber
// Three first bytes are checked before the mod: 'G' Google Play SubscriptionPurchaseV2 body -> facts, error and
// token bodies; '8' a Stripe subscription list -> facts; '9' one Stripe subscription -> facts; 'V' a Google Play
// voided purchases page; 'S' a Stripe events list (the events feed); 'C' a Stripe charges list (refunds expanded)
// -> a period refund (and the body as a refunds list); 'P' a Stripe invoice payments list; 'D' text through the
// strict date parser (`StrictDate`: RFC 3339, epoch milliseconds and seconds); 'M' a Google `Money` -> price;
// 'H' an App Store notification history page; 'O' a Stripe checkout sessions list -> one-time purchases; 'T' an App
// Store transaction history page; 'I' a Google Play one-time product purchase -> its fact (FuzzOneTimeStores.swift);
// 'J' and 'K' Apple's JWS/x5c verification path (FuzzAppleSigned.swift); 'Y' a page of the Stripe inventory (strict)
// -> stated purchases and accounts (FuzzStripeInventory.swift); 'R' a RevenueCat API v2 body: customer, list page,
// error object (FuzzRevenueCatV2.swift).
// Besides "never traps", each branch checks the sanitizing invariants: no decoded text holds a NUL, every decoded
// date lies in 1970...2200, no decoded price is negative, and text re-encoded for jsonb holds no NUL escape.
import Foundation
import SourceHTTP
import SubreconCore

/// Store decoders chosen by a leading ASCII letter or digit (the others by the first byte modulo 8, below).
private let byLetter: [UInt8: @Sendable (Data) -> Void] = [
    UInt8(ascii: "G"): googlePlay, UInt8(ascii: "V"): googleVoided, UInt8(ascii: "8"): stripeList,
    UInt8(ascii: "9"): stripeSubscription, UInt8(ascii: "S"): stripeEvents, UInt8(ascii: "C"): stripeCharges,
    UInt8(ascii: "P"): stripeInvoicePayments, UInt8(ascii: "D"): strictDate, UInt8(ascii: "M"): googleMoney,
    UInt8(ascii: "O"): stripeCheckoutSessions, UInt8(ascii: "T"): appStoreTransactionHistory,
    UInt8(ascii: "I"): googleProductPurchase, UInt8(ascii: "Y"): stripeInventoryPage, UInt8(ascii: "R"): revenueCatV2,
].merging(appleSignedDecoders) { $1 }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let bytes = Data(bytes: start, count: count)
    let selector = bytes[bytes.startIndex] % 8
    let body = Data(bytes.dropFirst())
    if let decoder = byLetter[bytes[bytes.startIndex]] {
        decoder(body)
        return 0
    }
    switch selector {
    case 0: revenueCatSubscriber(body)
    case 1: revenueCatError(body)
    case 2: appStoreStatus(body)
    case 3: appStoreError(body)
    case 4: transactionPayload(body)
    case 5: renewalPayload(body)
    case 6: receipt(body)
    default: text(body)
    }
    return 0
}

func check(_ text: String?, _ what: StaticString) {
    guard let text else { return }
    precondition(!text.unicodeScalars.contains("\u{0}"), "NUL survived in \(what)")
}

func check(_ date: Date?, _ what: StaticString) {
    guard let date else { return }
    precondition(SourceNumber.isPlausible(date), "implausible date kept in \(what)")
    _ = ISO8601.string(date)
}

func checkJSONB(_ json: Data) {
    let text = SourceText.jsonbText(json)
    // A NUL escape is `\u0000` preceded by an odd number of backslashes; after jsonbText there is none.
    let scalars = Array(text.unicodeScalars)
    var index = 0
    while index < scalars.count {
        if scalars[index] == "\\" {
            if index + 5 < scalars.count, scalars[index + 1] == "u", scalars[(index + 2)...(index + 5)].allSatisfy({ $0 == "0" }) {
                preconditionFailure("NUL escape left in jsonb text")
            }
            index += 2
        } else {
            index += 1
        }
    }
}

private func revenueCatSubscriber(_ body: Data) {
    guard let response = try? RevenueCatSubscriberResponse.decode(body: body) else { return }
    let subscriber = response.subscriber
    check(response.requestDate, "request_date")
    check(subscriber.originalAppUserID, "original_app_user_id")
    check(subscriber.managementURL, "management_url")
    for (id, entitlement) in subscriber.entitlements {
        check(id, "entitlement id")
        check(entitlement.productIdentifier, "product_identifier")
        check(entitlement.expiresDate, "expires_date")
        check(entitlement.purchaseDate, "purchase_date")
        check(entitlement.gracePeriodExpiresDate, "grace_period_expires_date")
    }
    for (id, subscription) in subscriber.subscriptions {
        check(id, "subscription product id")
        check(subscription.store, "store")
        check(subscription.periodType, "period_type")
        check(subscription.storeTransactionID, "store_transaction_id")
        check(subscription.price?.currency, "currency")
        if let amount = subscription.price?.amount { precondition(!amount.isNaN && amount >= 0, "negative RevenueCat price kept") }
        for date in [
            subscription.purchaseDate, subscription.originalPurchaseDate, subscription.expiresDate,
            subscription.gracePeriodExpiresDate, subscription.refundedAt, subscription.unsubscribeDetectedAt,
            subscription.billingIssuesDetectedAt, subscription.autoResumeDate,
        ] { check(date, "subscription date") }
    }
    for (id, purchases) in subscriber.nonSubscriptions {
        check(id, "non-subscription product id")
        for purchase in purchases {
            check(purchase.id, "id")
            check(purchase.store, "store")
            check(purchase.purchaseDate, "purchase_date")
            check(purchase.refundedAt, "refunded_at")
        }
    }
}

/// An error body; its last line, if any, is also read as a `Retry-After` header value (RevenueCat's seconds or
/// milliseconds, and Apple's absolute Unix milliseconds or an HTTP-date).
private func revenueCatError(_ body: Data) {
    #if RATE_LIMIT_WAIT_V2
        let errorBody = RevenueCatErrorBody.decode(body: body)
        check(errorBody?.message, "message")
        check(errorBody?.code, "code")
        let text = String(decoding: body, as: UTF8.self)
        let retryAfter = text.split(separator: "\n", omittingEmptySubsequences: false).last.map(String.init)
        for cap in [Duration.seconds(60), .seconds(0), .seconds(Int64.max)] {
            rateLimitWait(backoffMS: errorBody?.backoffMS, retryAfter: retryAfter, cap: cap)
        }
    #endif
}

#if RATE_LIMIT_WAIT_V2
    // `RequestedWait` / `WaitText` / `WaitHint` (the saturating 429 parse, SourceHTTP/RateLimiting): scripts/fuzz
    // always defines RATE_LIMIT_WAIT_V2 now.
    private func checkWait(_ asked: RequestedWait, cap: Duration) {
        switch asked {
        case .wait(let duration): precondition(duration >= .zero && duration <= cap, "a wait outside 0...cap")
        case .tooLong(let seconds): _ = RequestedWait.tooLongDescription(seconds: seconds, cap: cap)
        case .unspecified: break
        }
    }

    private func rateLimitWait(backoffMS: Double?, retryAfter: String?, cap: Duration) {
        let now = Date(timeIntervalSince1970: 1_772_000_000)
        checkWait(WaitHint.rateLimitWait(backoffMS: backoffMS, retryAfter: retryAfter, now: now, cap: cap), cap: cap)
        guard let retryAfter else { return }
        // Apple's Retry-After: absolute Unix milliseconds, or an HTTP-date.
        if let milliseconds = WaitText.number(retryAfter) {
            checkWait(RequestedWait.untilUnixMilliseconds(milliseconds, now: now, cap: cap), cap: cap)
        }
        if let date = WaitText.httpDate(retryAfter) { checkWait(RequestedWait.until(date, now: now, cap: cap), cap: cap) }
    }
#endif
// Without RATE_LIMIT_WAIT_V2 (before the saturating 429 parse), `RevenueCatErrorBody` and `rateLimitWait` are known
// to trap on `backoff_ms: 1e19` / `Retry-After: inf` (bullet 3, fixed with RequestedWait): the error body
// branch is then skipped so the other decoders are still fuzzed.

private func appStoreStatus(_ body: Data) {
    guard let response = try? AppStoreJSON.decode(StatusResponse.self, from: body) else { return }
    check(response.bundleId, "bundleId")
    check(response.environment, "environment")
    for group in response.data ?? [] {
        check(group.subscriptionGroupIdentifier, "subscriptionGroupIdentifier")
        for item in group.lastTransactions ?? [] {
            check(item.originalTransactionId, "originalTransactionId")
            check(item.signedTransactionInfo, "signedTransactionInfo")
            check(item.signedRenewalInfo, "signedRenewalInfo")
        }
    }
    if let json = try? JSONEncoder().encode(response) { checkJSONB(json) }
}

private func appStoreError(_ body: Data) {
    guard let payload = try? AppStoreJSON.decode(AppStoreErrorPayload.self, from: body) else { return }
    check(payload.errorMessage, "errorMessage")
    _ = payload.errorCode.map(AppStoreErrorPayload.retryableCodes.contains)
}

private func transactionPayload(_ body: Data) {
    guard let payload = try? AppStoreJSON.decode(JWSTransactionDecodedPayload.self, from: body) else { return }
    checkTransaction(payload)
}

func checkTransaction(_ payload: JWSTransactionDecodedPayload) {
    for text in [
        payload.originalTransactionId, payload.transactionId, payload.bundleId, payload.productId, payload.type,
        payload.environment, payload.currency, payload.storefront, payload.offerIdentifier, payload.revocationType,
    ] { check(text, "transaction text") }
    for date in [payload.purchaseDate, payload.originalPurchaseDate, payload.expiresDate, payload.signedDate, payload.revocationDate] {
        check(date, "transaction date")
    }
    if let json = try? JSONEncoder().encode(payload) { checkJSONB(json) }
}

private func renewalPayload(_ body: Data) {
    guard let payload = try? AppStoreJSON.decode(JWSRenewalInfoDecodedPayload.self, from: body) else { return }
    for text in [payload.originalTransactionId, payload.productId, payload.autoRenewProductId, payload.environment, payload.currency] {
        check(text, "renewal text")
    }
    for date in [payload.gracePeriodExpiresDate, payload.signedDate, payload.recentSubscriptionStartDate, payload.renewalDate] {
        check(date, "renewal date")
    }
    if let json = try? JSONEncoder().encode(payload) { checkJSONB(json) }
}

private func receipt(_ body: Data) {
    guard let response = VerifyReceiptResponse.decode(body: body) else { return }
    for environment in [StoreEnvironmentName.production, .sandbox] {
        let answer = ReceiptMapping.answer(response, environment: environment, productID: "pro.monthly")
        check(answer.originalTransactionID, "receipt original transaction id")
        for fact in answer.purchases { check(fact.productID, "receipt product id") }
        for entry in response.latestReceiptInfo ?? [] {
            for key in ["purchase_date_ms", "expires_date_ms", "cancellation_date_ms"] {
                check(ReceiptMapping.date(entry[key]?.text), "receipt date")
            }
        }
    }
}

private func googlePlay(_ body: Data) {
    _ = GoogleJSON.error(body).map { check($0.error?.message, "google error message") }
    _ = GoogleJSON.token(body).map { precondition(($0.expiresIn ?? 0) >= 0, "negative expires_in") }
    guard let purchase = try? GoogleJSON.subscription(body) else { return }
    check(purchase.subscriptionState, "subscriptionState")
    for item in purchase.lineItems ?? [] {
        check(GooglePlayMapping.date(item.expiryTime), "google expiryTime")
        if let price = GooglePlayMapping.price(item.autoRenewingPlan?.recurringPrice) {
            precondition(!price.amount.isNaN && price.amount >= 0, "negative Google price kept")
        }
    }
    guard let facts = try? GooglePlayMapping.storeFacts(purchase, token: "token") else { return }
    for fact in facts {
        check(fact.purchase.productID, "google product id")
        check(fact.purchase.storeTransactionID, "google order id")
        check(fact.purchase.expiresDate, "google expiry")
        check(fact.purchase.purchaseDate, "google start")
        for alias in fact.aliases { check(alias, "google order alias") }
    }
    if let json = try? JSONEncoder().encode(purchase) { checkJSONB(json) }
}

private func googleVoided(_ body: Data) {
    guard let page = try? GoogleJSON.voidedPurchases(body) else { return }
    check(page.nextPageToken, "voided next page token")
    precondition(page.nextPageToken?.isEmpty != true, "empty continuation token kept")
    for purchase in page.voidedPurchases ?? [] {
        check(purchase.purchaseToken, "voided purchase token")
        check(purchase.orderId, "voided order id")
        check(purchase.kind, "voided kind")
        check(purchase.dedupeKey, "voided dedupe key")
        check(purchase.voidedTime, "voided time")
        if let refund = purchase.refundedPurchase { checkRefund(refund, "voided refund") }
    }
}

/// A refund a feed states: keyed (`SeenRefund.of` gives exactly one), dated in 1970...9999, never a negative amount.
private func checkRefund(_ purchase: PurchaseFact, _ what: String) {
    precondition(purchase.refundedAt != nil, "\(what) without a date")
    check(purchase.refundedAt, "feed refund date")
    check(purchase.storeTransactionID, "feed refund transaction id")
    check(purchase.refundTransactionID, "feed refund key")
    let refunds = SeenRefund.of([purchase], asOf: .distantFuture)
    precondition(refunds.count == 1, "\(what) not kept once")
    precondition(refunds.allSatisfy { !$0.transactionID.isEmpty }, "\(what) without a key")
    if let amount = purchase.price?.amount { precondition(!amount.isNaN && amount >= 0, "\(what) amount out of range") }
}

private func text(_ body: Data) {
    let sanitized = SourceText.sanitizedJSON(body)
    precondition(String(data: sanitized, encoding: .utf8) != nil, "sanitized body is not UTF-8")
    checkJSONB(sanitized)
    let string = String(decoding: body, as: UTF8.self)
    check(SourceText.sanitized(string), "sanitized text")
    check(SourceNumber.date(unixMilliseconds: string), "ms string")
    if let value = Double(string) {
        check(SourceNumber.date(unixMilliseconds: value), "ms number")
        _ = SourceNumber.int64(value)
        _ = SourceNumber.saturatingInt64(value)
    }
    if let value = Int64(string) { check(SourceNumber.date(unixMilliseconds: value), "ms integer") }
}

private func stripeList(_ body: Data) {
    guard let list = try? StripeSubscriptionList.decode(body: body) else { return }
    check(list.object, "list object")
    check(list.url, "list url")
    for subscription in list.data { checkStripe(subscription) }
    checkStripeFacts(StripeMapping.storeFacts(list.data))
}

private func stripeSubscription(_ body: Data) {
    guard let subscription = try? StripeSubscription.decode(body: body) else { return }
    checkStripe(subscription)
    checkStripeFacts(StripeMapping.storeFacts(subscription))
    _ = StripeErrorBody.decode(body: body).map { check($0.message, "stripe error message") }
}

private func checkStripe(_ subscription: StripeSubscription) {
    for text in [subscription.id, subscription.status, subscription.customer, subscription.currency] { check(text, "subscription text") }
    for date in [
        subscription.cancelAt, subscription.canceledAt, subscription.endedAt, subscription.trialEnd, subscription.startDate,
        subscription.currentPeriodStart, subscription.currentPeriodEnd,
    ] { check(date, "subscription date") }
    if let invoice = subscription.latestInvoice {
        for text in [invoice.id, invoice.status, invoice.currency] { check(text, "invoice text") }
        _ = StripeRefundMapping.invoiceToAsk(subscription)
        for payment in StripeRefundMapping.statedPayments(of: invoice) ?? [] { checkPayment(payment) }
    }
    for item in subscription.items ?? [] {
        check(item.id, "item id")
        check(item.price?.id, "price id")
        check(item.price?.product, "product id")
        check(item.currentPeriodStart, "item period start")
        check(item.currentPeriodEnd, "item period end")
    }
}

private func checkStripeFacts(_ mapped: Result<[StoreFact], SourceError>) {
    switch mapped {
    case .failure(let error): check(error.message, "stripe error")
    case .success(let facts):
        for fact in facts {
            precondition(fact.purchase.origin == .stripe && fact.purchase.store == .stripe, "stripe fact from elsewhere")
            check(fact.purchase.productID, "stripe product")
            check(fact.purchase.expiresDate, "stripe expiry")
            if let price = fact.purchase.price {
                precondition(!price.amount.isNaN && price.amount >= 0, "stripe price out of range")
            }
        }
    }
}

private func stripeEvents(_ body: Data) {
    guard let list = try? StripeEventList.decode(body: body) else { return }
    check(list.object, "events list object")
    check(list.url, "events list url")
    for event in list.data {
        for text in [event.id, event.object, event.type, event.objectType, event.objectID, event.customer] {
            check(text, "event text")
        }
        precondition(event.customer?.isEmpty != true, "an empty customer id kept")
        check(event.created, "event created")
        if let charge = event.charge {
            check(charge.currency, "charge currency")
            check(charge.paymentIntent, "charge payment intent")
            for refund in charge.refunds ?? [] { check(refund.created, "charge refund created") }
        }
        if let refund = event.refundedPurchase {
            precondition(event.type == "charge.refunded" && event.charge?.refunded == true, "a refund that is not a full refund")
            checkRefund(refund, "charge refund")
        }
    }
}

private func checkPayment(_ payment: StripeInvoicePayment) {
    for text in [payment.id, payment.invoice, payment.currency, payment.status, payment.paymentType, payment.paymentIntent, payment.charge]
    {
        check(text, "invoice payment text")
    }
    _ = StripeRefundMapping.isPaid(payment)
    _ = StripeRefundMapping.chargeLookup(payment)
}

private func stripeInvoicePayments(_ body: Data) {
    guard let list = try? StripeInvoicePaymentList.decode(body: body) else { return }
    for payment in list.data { checkPayment(payment) }
}

private func stripeCharges(_ body: Data) {
    guard let list = try? StripeChargeList.decode(body: body) else { return }
    for charge in list.data {
        for text in [charge.id, charge.currency, charge.paymentIntent, charge.status] { check(text, "charge text") }
        for refund in charge.refunds ?? [] {
            check(refund.id, "refund id")
            check(refund.status, "refund status")
            check(refund.created, "refund created")
        }
    }
    _ = (try? StripeList<StripeRefund>.decode(body: body))?.data.map { check($0.created, "listed refund created") }
    let payment = StripeInvoicePayment(
        id: "inpay", amountPaid: 1, currency: "usd", status: "paid", paymentType: "payment_intent", paymentIntent: "pi")
    switch StripeRefundMapping.periodRefund(subscription: "sub", payments: [StripePaidPayment(payment: payment, charges: list.data)]) {
    case .failure(let error): check(error.message, "stripe refund error")
    case .success(let refund?):
        check(refund.refundedAt, "stripe refund date")
        check(refund.transactionID, "stripe refund id")
        if let price = refund.price { precondition(!price.amount.isNaN && price.amount >= 0, "stripe refund out of range") }
    case .success(nil): break
    }
}
