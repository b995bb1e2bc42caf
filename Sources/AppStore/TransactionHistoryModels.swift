import Foundation
import SubreconCore

/// Body of `GET /inApps/v2/history/{transactionId}` (`HistoryResponse`, apple.md §1.4): at most 20 signed
/// transactions a page, continued by `revision` while `hasMore`. Decoded strictly: a field of the wrong type fails
/// the page (CONTRACT "Hostile answers and bounded work": a malformed page is a fetch error, never an empty one). Pure Foundation + SubreconCore (the
/// fuzz target compiles it).
public struct HistoryResponse: Decodable, Sendable, Hashable {
    public var revision: String?
    public var hasMore: Bool?
    public var bundleId: String?
    public var appAppleId: Int64?
    public var environment: String?
    public var signedTransactions: [String]?

    public init(
        revision: String? = nil, hasMore: Bool? = nil, bundleId: String? = nil, appAppleId: Int64? = nil,
        environment: String? = nil, signedTransactions: [String]? = nil
    ) {
        self.revision = revision
        self.hasMore = hasMore
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.signedTransactions = signedTransactions
    }

    /// The page in `body` (sanitized first: no decoded text holds a NUL).
    public static func decode(body: Data) throws -> HistoryResponse { try AppStoreJSON.decode(HistoryResponse.self, from: body) }

    /// Pages of one history query read at most: beyond it the list ends as incomplete (CONTRACT "Hostile answers and bounded work"). A customer's
    /// non-consumables fit in one page of 20 almost always; 25 pages is 500 of them.
    public static let maxPages = 25

    /// Where the query goes after this page (CONTRACT "Hostile answers and bounded work"): nil at its end (`hasMore: false`), the next revision, or an
    /// error naming why the list cannot be known complete: `hasMore` or `signedTransactions` missing, another app's
    /// bundle id, `hasMore` without a revision, a revision seen before (inserted into `seen`).
    public func next(bundleID: String, seen: inout Set<String>) -> Result<String?, SourceError> {
        func incomplete(_ why: String) -> Result<String?, SourceError> {
            .failure(SourceError(origin: .appStore, kind: .fetch, message: "App Store Server API: transaction history incomplete: " + why))
        }
        guard signedTransactions != nil else { return incomplete("a page without signedTransactions") }
        if let bundleId, bundleId != bundleID { return incomplete("a page of another app's bundle id") }
        guard let hasMore else { return incomplete("a page without hasMore") }
        guard hasMore else { return .success(nil) }
        guard let revision, !revision.isEmpty else { return incomplete("hasMore without a revision") }
        guard seen.insert(revision).inserted else { return incomplete("a revision seen before") }
        return .success(revision)
    }
}
