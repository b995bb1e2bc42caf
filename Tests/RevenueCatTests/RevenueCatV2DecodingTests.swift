import Foundation
import RevenueCat
import Testing

/// The v2 decoder on RevenueCat's documented shapes (docs/CONTRACT.md, "How each answer is read"): the customer object,
/// list pages whose `next_page` is null or absent, the error object; anything else is not the documented shape.
@Suite("RevenueCat API v2 decoding")
struct RevenueCatV2DecodingTests {
    static let customer = #"""
        {"active_entitlements":{"items":[],"next_page":null,"object":"list","url":"/v2/projects/proj1ab2c3d4/customers/19b8de26-77c1-49f1-aa18-019a391603e2/active_entitlements"},
         "experiment":null,"first_seen_at":1658399423658,"id":"19b8de26-77c1-49f1-aa18-019a391603e2","last_seen_app_version":null,
         "last_seen_at":1658399423658,"last_seen_country":null,"last_seen_platform":null,"last_seen_platform_version":null,
         "object":"customer","project_id":"proj1ab2c3d4"}
        """#

    @Test("a documented customer decodes: its id and project, unknown and null fields ignored")
    func customerDecodes() throws {
        let decoded = try RevenueCatV2Customer.decode(body: Data(Self.customer.utf8))
        #expect(decoded.id == "19b8de26-77c1-49f1-aa18-019a391603e2")
        #expect(decoded.projectID == "proj1ab2c3d4")
        #expect(decoded.firstSeenAtMS == 1_658_399_423_658)
    }

    @Test(
        "a body that is not a customer is refused",
        arguments: [
            #"{"object":"list","items":[],"next_page":null}"#, #"{"object":"customer"}"#, #"{"object":"customer","id":7}"#,
            #"{"id":"a"}"#, "not json", "", "[]", #"{"object":"error","type":"resource_missing"}"#,
        ])
    func notACustomer(_ body: String) {
        #expect(throws: (any Error).self) { try RevenueCatV2Customer.decode(body: Data(body.utf8)) }
    }

    @Test("list pages: next_page null, absent or a path; items counted")
    func listPages() throws {
        let last = try RevenueCatV2ListPage.decode(
            body: Data(#"{"items":[],"next_page":null,"object":"list","url":"https://api.revenuecat.com/v2/projects/p/customers"}"#.utf8))
        #expect(last.itemCount == 0 && last.nextPage == nil)
        let absent = try RevenueCatV2ListPage.decode(body: Data(#"{"object":"list","items":[{"object":"customer","id":"a"}]}"#.utf8))
        #expect(absent.itemCount == 1 && absent.nextPage == nil)
        let more = try RevenueCatV2ListPage.decode(
            body: Data(#"{"object":"list","items":[{}],"next_page":"/v2/projects/p/customers?starting_after=a","url":"/v2/x"}"#.utf8))
        #expect(more.nextPage == "/v2/projects/p/customers?starting_after=a")
        #expect(throws: (any Error).self) { try RevenueCatV2ListPage.decode(body: Data(#"{"object":"customer","items":[]}"#.utf8)) }
        #expect(throws: (any Error).self) { try RevenueCatV2ListPage.decode(body: Data(#"{"object":"list"}"#.utf8)) }
    }

    @Test("the documented error objects: 404 resource_missing, 403 authorization_error, 429 with backoff_ms")
    func errorObjects() throws {
        let missing = try #require(
            RevenueCatV2ErrorBody.decode(
                body: Data(
                    #"{"object":"error","type":"resource_missing","message":"Customer not found.","retryable":false,"doc_url":"https://errors.rev.cat/resource-missing"}"#
                        .utf8)))
        #expect(missing.type == RevenueCatV2ErrorBody.resourceMissing && missing.retryable == false && missing.backoffMS == nil)
        let forbidden = try #require(
            RevenueCatV2ErrorBody.decode(body: Data(#"{"object":"error","type":"authorization_error","message":"no"}"#.utf8)))
        #expect(forbidden.type == RevenueCatV2ErrorBody.authorizationError)
        let limited = try #require(
            RevenueCatV2ErrorBody.decode(
                body: Data(
                    #"{"object":"error","type":"rate_limit_error","message":"Rate limit exceeded","retryable":true,"doc_url":"https://errors.rev.cat/rate-limit-error","backoff_ms":1000}"#
                        .utf8)))
        #expect(limited.backoffMS == 1000 && limited.retryable == true && limited.docURL == "https://errors.rev.cat/rate-limit-error")
        #expect(RevenueCatV2ErrorBody.decode(body: Data(#"{"object":"error","type":"x","backoff_ms":"250"}"#.utf8))?.backoffMS == 250)
    }

    @Test(
        "a v1 error body, a body without type, or not JSON is no v2 error object",
        arguments: [
            #"{"code":7225,"message":"Invalid API key"}"#, #"{"object":"error"}"#, #"{"object":"list","type":"x"}"#, "<html>", "",
        ])
    func notAnError(_ body: String) {
        #expect(RevenueCatV2ErrorBody.decode(body: Data(body.utf8)) == nil)
    }

    @Test("the customer path percent-encodes the id and the project as one segment each")
    func paths() {
        #expect(
            RevenueCatV2Client.customerPath(project: "proj1", customerID: "$RCAnonymousID:ab/c d")
                == "/v2/projects/proj1/customers/%24RCAnonymousID%3Aab%2Fc%20d")
        #expect(RevenueCatV2Client.projectPath("p/1") == "/v2/projects/p%2F1")
    }
}
