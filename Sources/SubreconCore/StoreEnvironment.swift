import Foundation

/// Which purchases may entitle: a production run ignores sandbox purchases.
public enum StoreEnvironment: String, Sendable, Codable, Hashable {
    case production
    case sandbox
}
