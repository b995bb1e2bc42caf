import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import SourceHTTP
import SubreconCore

/// What reading Google's voided purchases over a window gave (CONTRACT "Which users a run asks about" store feeds).
public struct GoogleVoidedFeed: Sendable, Hashable {
    /// Voided purchases with a purchase token, one per order id (or per token when the entry has no order id), in
    /// the order read.
    public var entries: [VoidedPurchase] = []
    /// Entries with neither a purchase token nor anything to find a user by: counted and ignored.
    public var rejected = 0
    /// Pages read.
    public var pages = 0
    /// The `startTime` actually asked for (the window's start, or 30 days before its end when older).
    public var startTime: Date
    /// The `endTime` actually asked for.
    public var endTime: Date
    /// True when the window's start was older than Google's 30 days and was moved forward.
    public var clamped = false

    /// The purchase tokens named, in order, without repeats.
    public var purchaseTokens: [String] {
        var seen = Set<String>()
        return entries.compactMap(\.purchaseToken).filter { seen.insert($0).inserted }
    }
}

extension GooglePlayClient {
    /// Google keeps voided purchases queryable for 30 days: an older `startTime` is moved forward.
    public static let voidedWindow: TimeInterval = 30 * 86_400
    /// Results per page asked for (Google's maximum).
    public static let voidedPageSize = 1000
    /// Pages read at most (1,000 voids each): beyond it the feed fails rather than run unbounded.
    public static let maxVoidedPages = 100

    /// The `[startTime, endTime]` to ask Google for when the feed's window is `[since, until)`: `endTime` is `until`
    /// but never after `now` (Google refuses a future end), `startTime` is `since` but never more than 30 days before
    /// `endTime` (Google refuses older), and never after `endTime`.
    public static func voidedWindow(since: Date, until: Date, now: Date) -> (start: Date, end: Date, clamped: Bool) {
        let end = min(until, now)
        let earliest = end.addingTimeInterval(-voidedWindow)
        let start = min(max(since, earliest), end)
        return (start, end, since < earliest)
    }

    /// Reads `purchases.voidedpurchases.list` with `type=1` (subscriptions as well as one-time products) over the
    /// window, following `tokenPagination.nextPageToken`. Entries are deduplicated by `orderId` (by purchase token
    /// when an entry has none); an entry with no purchase token is counted in `rejected`. Any page failing (after
    /// the transport's retries and one access-token refresh on 401), a malformed page, a repeated continuation
    /// token or more than `maxVoidedPages` pages fails the whole feed: never a partial answer taken as complete.
    public func voidedPurchases(since: Date, until: Date) async -> Result<GoogleVoidedFeed, SourceError> {
        let window = Self.voidedWindow(since: since, until: until, now: now())
        var feed = GoogleVoidedFeed(startTime: window.start, endTime: window.end, clamped: window.clamped)
        if window.clamped {
            logger.warning(
                "google play voided purchases: window start older than Google's 30 days, moved forward",
                metadata: [
                    "source": "\(Self.source)", "feed.since": "\(ISO8601.string(since))",
                    "feed.start_time": "\(ISO8601.string(window.start))",
                ])
        }
        let end = Self.milliseconds(window.end)
        let start = min(window.clamped ? end - Int64(Self.voidedWindow * 1000) : Self.milliseconds(window.start), end)
        var seen = Set<String>()
        var tokensSeen = Set<String>()
        var pageToken: String?
        repeat {
            if feed.pages >= Self.maxVoidedPages {
                return .failure(fetchError("voided purchases: more than \(Self.maxVoidedPages) pages"))
            }
            let url = voidedPurchasesURL(startMillis: start, endMillis: end, pageToken: pageToken)
            let body: Data
            switch await authorizedGet(url: url, what: "voided purchases", classify: classifyList) {
            case .failure(let error): return .failure(error)
            case .success(let data): body = data
            }
            guard let page = try? GoogleJSON.voidedPurchases(body) else {
                return .failure(fetchError("voided purchases: malformed body"))
            }
            feed.pages += 1
            for purchase in page.voidedPurchases ?? [] {
                guard purchase.purchaseToken?.isEmpty == false, let key = purchase.dedupeKey else {
                    feed.rejected += 1
                    continue
                }
                if seen.insert(key).inserted { feed.entries.append(purchase) }
            }
            pageToken = page.nextPageToken
            if let next = pageToken, !tokensSeen.insert(next).inserted {
                return .failure(fetchError("voided purchases: the same continuation token twice"))
            }
        } while pageToken != nil
        logger.debug(
            "google play voided purchases read",
            metadata: ["source": "\(Self.source)", "feed.pages": "\(feed.pages)", "feed.entries": "\(feed.entries.count)"])
        return .success(feed)
    }

    /// `…/applications/{package}/purchases/voidedpurchases?type=1&startTime=…&endTime=…&maxResults=1000[&token=…]`.
    public func voidedPurchasesURL(startMillis: Int64, endMillis: Int64, pageToken: String?) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#%;")
        let encodedPackage = configuration.packageName.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
        var url =
            configuration.baseURL + "/androidpublisher/v3/applications/" + encodedPackage
            + "/purchases/voidedpurchases?type=1&startTime=\(startMillis)&endTime=\(endMillis)&maxResults=\(Self.voidedPageSize)"
        if let pageToken {
            var query = CharacterSet.alphanumerics
            query.insert(charactersIn: "-._~")
            url += "&token=" + (pageToken.addingPercentEncoding(withAllowedCharacters: query) ?? "")
        }
        return url
    }

    /// 200: the body; 401: nil (refresh and ask again).
    /// 403 and 404 name what to check: a list has no absent answer.
    @Sendable private func classifyList(_ answer: SourceAnswer) -> AnswerClass<Data?> {
        switch answer.status {
        case 200: return .success(answer.body)
        case 401: return .success(nil)
        case 403:
            return .fail(
                reason: Self.named(answer)
                    + ": the service account may not read this app's voided purchases (Play Console → API access, package name)")
        case 404: return .fail(reason: Self.named(answer) + ": check GOOGLE_PLAY_PACKAGE_NAME")
        case 429: return .rateLimited(Self.requestedWait(answer, cap: transport.policy.maxRateLimitWait))
        case 500...599: return .retry(problem: Self.named(answer))
        default: return .fail(reason: Self.named(answer))
        }
    }

    static func milliseconds(_ date: Date) -> Int64 {
        SourceNumber.saturatingInt64((date.timeIntervalSince1970 * 1000).rounded(.down)) ?? 0
    }
}
