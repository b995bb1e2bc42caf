import Crypto
import Foundation
import X509

/// A chain that validated to a configured root: its leaf, the leaf's key, and the instants every certificate of
/// the chain (leaf, intermediate, root) is valid between.
struct VerifiedChain: Sendable {
    var leaf: Certificate
    var leafKey: P256.Signing.PublicKey
    /// The latest `notValidBefore` of the chain.
    var validFrom: Date
    /// The earliest `notValidAfter` of the chain.
    var validUntil: Date
    var cachedAt: Date

    /// True when every certificate of the chain is valid at `validationTime`.
    func covers(_ validationTime: Date) -> Bool { validationTime >= validFrom && validationTime <= validUntil }
}

/// Validated chains, by the exact JWS header segment (`alg` and the three `x5c` certificates, byte for byte), for a
/// limited time and number. Only chains that validated are inserted.
actor ChainCache {
    private let lifetime: TimeInterval
    private let capacity: Int
    private var entries: [String: VerifiedChain] = [:]

    init(lifetime: TimeInterval, capacity: Int) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// The chain cached for `header`, unless it is older than the lifetime (or cached "after" `now`).
    func chain(forHeader header: String, now: Date) -> VerifiedChain? {
        guard let entry = entries[header] else { return nil }
        guard now.timeIntervalSince(entry.cachedAt) < lifetime, now >= entry.cachedAt else {
            entries[header] = nil
            return nil
        }
        return entry
    }

    func insert(_ chain: VerifiedChain, forHeader header: String, now: Date) {
        entries = entries.filter { now.timeIntervalSince($0.value.cachedAt) < lifetime }
        if entries[header] == nil, entries.count >= capacity,
            let oldest = entries.min(by: { $0.value.cachedAt < $1.value.cachedAt })
        {
            entries[oldest.key] = nil
        }
        entries[header] = chain
    }
}

extension ChainCache {
    /// How many chains are cached (for tests).
    var count: Int { entries.count }
}

extension JWSVerifier {
    /// How many validated chains the verifier holds (for tests).
    var cachedChainCount: Int { get async { await cache.count } }
}
