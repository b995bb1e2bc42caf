import Foundation
import SubreconCommand
import SubreconCore
import SubreconJob
import Testing

/// What an operator hands the job (docs/CONTRACT.md, "Commands"): `--users-file` and `products import`'s file, parsed
/// as strictly as a store's answer. The binary's side (nothing written, exit 64, `products list` read back) is in
/// SubreconIntegrationTests' `OperatorInputTests`.
@Suite("Input files: the users file and the product file, strict and exact")
struct InputFilesTests {
    static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

    func parse(_ text: String, prefix: [UInt8] = []) throws -> [ProductCatalog.Entry] {
        try ProductFile.parse(data: Data(prefix + Array(text.utf8)), name: "products.csv")
    }

    /// The one line a refused file gets: a usage error (64) naming the file and its line.
    func expectRefused(_ data: Data, line: Int, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let entries = try ProductFile.parse(data: data, name: "products.csv")
            Issue.record("\(what): accepted as \(entries)", sourceLocation: sourceLocation)
        } catch let failure as CommandFailure {
            #expect(failure.status == .usage, "\(what): \(failure)", sourceLocation: sourceLocation)
            #expect(failure.description.contains("products.csv:\(line):"), "\(what): \(failure)", sourceLocation: sourceLocation)
            #expect(!failure.description.contains("\n"), "\(what): one line", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(what): \(error)", sourceLocation: sourceLocation)
        }
    }

    func expectRefused(_ text: String, line: Int, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectRefused(Data(text.utf8), line: line, what, sourceLocation: sourceLocation)
    }

    @Test("input files: users file and product file")
    func inputFiles() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-in-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let users = dir.appendingPathComponent("users.txt")
        try Data("# night of 2026-06-01\nu1\n\n  u2 \nu1\n$RCAnonymousID:abc\n".utf8).write(to: users)
        #expect(try UsersFile.read(path: users.path) == ["u1", "u2", "$RCAnonymousID:abc"])
        let csv = try ProductFile.parse(data: Data("product_id,tier,entitlement\npremium,1,premium\nlifetime,2,\n".utf8), name: "p.csv")
        #expect(csv == [.init(productID: "premium", tier: 1, entitlement: "premium"), .init(productID: "lifetime", tier: 2)])
        let json = try ProductFile.parse(data: Data(#"[{"product_id":"pro","tier":2,"entitlement":"pro"}]"#.utf8), name: "p.json")
        #expect(json == [.init(productID: "pro", tier: 2, entitlement: "pro")])
        #expect(throws: CommandFailure.self) { try ProductFile.parse(data: Data("premium,one\n".utf8), name: "bad.csv") }
    }

    @Test("a users file with Windows line endings (CRLF) reads as with LF; a CR inside a line is refused naming its line")
    func usersFileLineEndings() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("subrecon-in-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let users = dir.appendingPathComponent("users.txt")
        try Data("# exported\r\nu1\r\n\r\n  u2 \r\nu3\nu1\r\n".utf8).write(to: users)
        #expect(try UsersFile.read(path: users.path) == ["u1", "u2", "u3"])
        try Data((Self.bom + Array("u1\r\nu2".utf8))).write(to: users)
        #expect(try UsersFile.read(path: users.path) == ["u1", "u2"])
        try Data("u1\r\nu\r2\r\n".utf8).write(to: users)
        do {
            let ids = try UsersFile.read(path: users.path)
            Issue.record("a CR inside an id was accepted: \(ids)")
        } catch let failure as CommandFailure {
            #expect(failure.status == .usage && failure.description.contains(":2:") && failure.description.contains("U+000D"), "\(failure)")
        }
    }

    @Test("a leading BOM is ignored, with or without a header; a BOM anywhere else is refused")
    func byteOrderMark() throws {
        #expect(try parse("com.app.x,1\n", prefix: Self.bom) == [.init(productID: "com.app.x", tier: 1)])
        #expect(
            try parse("product_id,tier,entitlement\r\ncom.app.x,2,pro\r\n", prefix: Self.bom) == [
                .init(productID: "com.app.x", tier: 2, entitlement: "pro")
            ])
        #expect(
            try ProductFile.parse(data: Data(Self.bom + Array("[{\"product_id\":\"j\",\"tier\":3}]".utf8)), name: "p.json") == [
                .init(productID: "j", tier: 3)
            ])
        expectRefused("a,1\n\u{FEFF}b,1\n", line: 2, "a BOM inside the file")
    }

    @Test("invalid UTF-8 is refused naming its line, never stored with replacement characters")
    func invalidUTF8() {
        expectRefused(Data("ok,1\r\n".utf8) + Data([0x62, 0x61, 0x64, 0xFF, 0x2C, 0x31, 0x0A]), line: 2, "a 0xFF byte")
        expectRefused(Data("ok,1\n".utf8) + Data("x,1\n".utf8) + Data([0xC3, 0x28, 0x2C, 0x32]), line: 3, "a broken sequence")
    }

    @Test("RFC 4180: quoted fields hold commas, doubled quotes and are read exactly; a header is optional")
    func quotedFields() throws {
        #expect(
            try parse("\"com.app.\"\"q\"\"\",1\n\"com.app,comma\",2,\"pro, plus\"\n") == [
                .init(productID: "com.app.\"q\"", tier: 1), .init(productID: "com.app,comma", tier: 2, entitlement: "pro, plus"),
            ])
        #expect(try parse("product_id,tier\n\"com.x\",\"0\"\n") == [.init(productID: "com.x", tier: 0)])
        #expect(try parse("\" spaced \",1000,\"\"\n") == [.init(productID: " spaced ", tier: 1000, entitlement: "")])
        expectRefused("a,1\n\"open,1\n", line: 2, "a quoted field never closed")
        expectRefused("a,1\nb\"c,1\n", line: 2, "a quote inside an unquoted field")
        expectRefused("a,1\n\"b\"x,1\n", line: 2, "text after a closing quote")
        expectRefused("product_id,tier,price\na,1,2\n", line: 1, "an unknown header")
    }

    @Test("a tier is an integer 0–1000: negative, too large for an integer, fractional or missing are refused naming the line")
    func tiers() {
        for (value, what) in [
            ("-1", "negative"), ("1001", "over 1000"), ("2147483648", "over int4"), ("99999999999999999999", "over Int64"),
            ("1.5", "fractional"), ("", "empty"), ("one", "a word"), ("0x1", "hex"),
        ] {
            expectRefused("ok,1\nbad,\(value)\n", line: 2, "tier \(what)")
        }
        expectRefused("ok,1\nbad\n", line: 2, "no tier")
        expectRefused("ok,1\nbad,1,pro,extra\n", line: 2, "a fourth field")
    }

    @Test("a product id is non-empty, without control characters or surrounding blanks; listed twice is refused naming both lines")
    func productIDs() {
        expectRefused("ok,1\n,1\n", line: 2, "empty")
        expectRefused("ok,1\n\"\",1\n", line: 2, "empty, quoted")
        expectRefused("ok,1\n\u{1B}[2Jx,1\n", line: 2, "an escape sequence")
        expectRefused("ok,1\nx\ty,1\n", line: 2, "a tab")
        expectRefused("ok,1\n\"x\ny\",1\n", line: 2, "a newline inside quotes")
        expectRefused("ok,1\nx\u{0}y,1\n", line: 2, "a NUL")
        expectRefused("ok,1\nx\u{85}y,1\n", line: 2, "a C1 control")
        expectRefused("ok,1\n com.x ,1\n", line: 2, "unquoted blanks around the id")
        expectRefused("ok,1\nx,1,\u{7}pro\n", line: 2, "an entitlement with a control character")
        do {
            _ = try parse("com.x,1\nother,2\ncom.x,3\n")
            Issue.record("a product listed twice was accepted")
        } catch {
            #expect("\(error)".contains("products.csv:3:") && "\(error)".contains("line 1"), "\(error)")
        }
    }

    @Test("JSON gets the same checks, each naming its line")
    func json() throws {
        let good =
            "[\n  {\"product_id\": \"a\", \"tier\": 1, \"entitlement\": \"pro\"},\n  {\"product_id\": \"b\", \"tier\": 0, \"entitlement\": null}\n]\n"
        #expect(
            try ProductFile.parse(data: Data(good.utf8), name: "products.csv") == [
                .init(productID: "a", tier: 1, entitlement: "pro"), .init(productID: "b", tier: 0),
            ])
        func entry(_ text: String) -> String { "[\n  {\"product_id\": \"ok\", \"tier\": 1},\n  \(text)\n]\n" }
        expectRefused(entry("{\"product_id\": \"neg\", \"tier\": -1}"), line: 3, "a negative tier")
        expectRefused(entry("{\"product_id\": \"big\", \"tier\": 1001}"), line: 3, "a tier over 1000")
        expectRefused(entry("{\"product_id\": \"huge\", \"tier\": 99999999999999999999}"), line: 3, "a tier over Int64")
        expectRefused(entry("{\"product_id\": \"frac\", \"tier\": 1.5}"), line: 3, "a fractional tier")
        expectRefused(entry("{\"product_id\": \"str\", \"tier\": \"1\"}"), line: 3, "a tier as text")
        expectRefused(entry("{\"product_id\": \"\", \"tier\": 1}"), line: 3, "an empty product id")
        expectRefused(entry("{\"product_id\": \"e\\u001b[2J\", \"tier\": 1}"), line: 3, "an escape sequence")
        expectRefused(entry("{\"product_id\": \"ok\", \"tier\": 2}"), line: 3, "listed twice")
        expectRefused(entry("{\"product_id\": \"t\", \"tier\": 1, \"teir\": 2}"), line: 3, "an unknown key")
        expectRefused(entry("{\"tier\": 1}"), line: 3, "no product id")
        expectRefused(entry("7"), line: 3, "not an object")
    }
}
