import NIOHTTP1
import SourceHTTP

/// What a v2 answer says of its key's rate budget: `RevenueCat-Rate-Limit-Current-Usage` (requests in the current
/// one-minute window, this one included) of `RevenueCat-Rate-Limit-Current-Limit` (requests a minute). Both must be
/// present once and read as whole numbers, the limit above zero; anything else says nothing (never a default).
public struct RevenueCatV2RateLimit: Sendable, Hashable {
    public var usage: Int
    public var limit: Int

    /// The share of the limit at which the client slows down (a 429 would come within a few requests).
    public static let nearlySpent = 0.9

    public init?(_ headers: HTTPHeaders) {
        let usage = headers["revenuecat-rate-limit-current-usage"]
        let limit = headers["revenuecat-rate-limit-current-limit"]
        guard usage.count == 1, limit.count == 1, let used = Self.count(usage[0]), let allowed = Self.count(limit[0]), allowed > 0
        else { return nil }
        self.usage = used
        self.limit = allowed
    }

    /// Whether this window's usage reached `nearlySpent` of its limit.
    public var isNearlySpent: Bool { Double(usage) >= Double(limit) * Self.nearlySpent }

    /// A whole number of at most 9 ASCII digits, nothing around it.
    static func count(_ text: some StringProtocol) -> Int? {
        let bytes = text.utf8
        guard (1...9).contains(bytes.count), bytes.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        return Int(String(text))
    }
}
