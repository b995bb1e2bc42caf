// 'T': an App Store transaction history page (`HistoryResponse`) -> its continuation rule; 'I': a Google Play
// `ProductPurchase` (a one-time product) -> its fact (CONTRACT "Sources and the decision"). Never traps; decoded text holds no NUL, dates lie in
// 1970...2200, and a Google one-time fact is never anything but a non-expiring (or consumed: unstated) Play purchase.
import Foundation
import SubreconCore

@Sendable func appStoreTransactionHistory(_ body: Data) {
    guard let page = try? HistoryResponse.decode(body: body) else { return }
    for text in [page.revision, page.bundleId, page.environment] + (page.signedTransactions ?? []).map(Optional.some) {
        check(text, "history text")
    }
    var seen: Set<String> = []
    switch page.next(bundleID: "com.example", seen: &seen) {
    case .failure(let error): check(error.message, "history error")
    case .success(let next?): precondition(page.hasMore == true && !next.isEmpty, "continued without hasMore")
    case .success(nil): precondition(page.hasMore == false, "ended without hasMore false")
    }
}

@Sendable func googleProductPurchase(_ body: Data) {
    guard let purchase = try? GoogleJSON.product(body) else { return }
    for text in [purchase.kind, purchase.productId, purchase.orderId, purchase.regionCode] { check(text, "product purchase text") }
    guard let fact = try? GooglePlayProductMapping.storeFact(purchase, productID: purchase.productId ?? "p", token: "t") else { return }
    precondition(
        fact.purchase.store == .playStore && [.nonExpiring, .unstated].contains(fact.purchase.kind), "one-time fact of another kind")
    check(fact.purchase.purchaseDate, "product purchase time")
}
