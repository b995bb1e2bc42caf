// The 'R' entry of the decoder table (Fuzz/FuzzDecoders.swift): a RevenueCat API v2 body, read as each shape the
// client reads (a customer, a list page, the error object). Besides "never traps": no decoded text holds a NUL, and a
// decoded `backoff_ms` judged as a 429 wait never traps either.
import Foundation
import SourceHTTP
import SubreconCore

@Sendable func revenueCatV2(_ body: Data) {
    if let customer = try? RevenueCatV2Customer.decode(body: body) {
        check(customer.id, "v2 customer id")
        check(customer.projectID, "v2 project_id")
    }
    if let page = try? RevenueCatV2ListPage.decode(body: body) {
        precondition(page.itemCount >= 0, "negative item count")
        check(page.nextPage, "v2 next_page")
    }
    if let error = RevenueCatV2ErrorBody.decode(body: body) {
        check(error.type, "v2 error type")
        check(error.message, "v2 error message")
        check(error.docURL, "v2 doc_url")
        _ = WaitHint.rateLimitWait(backoffMS: error.backoffMS, retryAfter: nil, now: Date(), cap: .seconds(60))
    }
}
