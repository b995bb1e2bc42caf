import Foundation
import SubreconCore

extension GooglePlayClient {
    /// The URL of one purchase token's `purchases.products` resource for `productID` (each percent-encoded as one
    /// segment).
    public func productURL(productID: String, token: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#%;")
        let encode = { (text: String) in text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
        return configuration.baseURL + "/androidpublisher/v3/applications/" + encode(configuration.packageName)
            + "/purchases/products/" + encode(productID) + "/tokens/" + encode(token)
    }

    /// Google's view of purchase token `token` as a purchase of the one-time product `productID` (CONTRACT "Sources and the decision"):
    /// `GET …/purchases/products/{productId}/tokens/{token}`, mapped by `GooglePlayProductMapping`. Empty when Google
    /// does not know it (404, absence); one expired fact of `productID` for a 410, as the subscription path; an
    /// error (fetch) for anything unanswerable, malformed or out of range: the user is left untouched. Deadlines,
    /// retries, the body cap and the one token refresh on 401 are the subscription lookup's (`authorizedGet`).
    public func productFacts(productID: String, token: String) async -> Result<[StoreFact], SourceError> {
        guard !token.isEmpty, !productID.isEmpty else { return .failure(fetchError("empty purchase token or product id")) }
        switch await authorizedGet(url: productURL(productID: productID, token: token), what: "product purchase", classify: classify) {
        case .failure(let error): return .failure(error)
        case .success(.lookup(.notFound)): return .success([])
        case .success(.lookup(.gone)): return .success([GooglePlayMapping.expiredEvidence(token: token, productID: productID)])
        case .success(.lookup(.found)): return .failure(fetchError("product purchase: unexpected answer"))
        case .success(.body(let body)):
            guard let purchase = try? GoogleJSON.product(body) else { return .failure(fetchError("malformed product purchase body")) }
            do {
                return .success([try GooglePlayProductMapping.storeFact(purchase, productID: productID, token: token)])
            } catch {
                return .failure(fetchError("product purchase: " + error.description))
            }
        }
    }
}
