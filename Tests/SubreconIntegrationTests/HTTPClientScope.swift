import AsyncHTTPClient

enum HTTPClientScope {
    static func with<T: Sendable>(_ body: (HTTPClient) async throws -> T) async throws -> T {
        try await HTTPClient.withHTTPClient { try await body($0) }
    }
}
