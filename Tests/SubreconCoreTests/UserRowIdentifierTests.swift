import Foundation
import SubreconCore
import Testing

/// An identifier or account a `users` row stores is read once, at the database edge (docs/CONTRACT.md, Database):
/// NULL, `''` or whitespace only is none; anything else is kept exactly (an Apple token's case is compared elsewhere).
@Suite("A row's stored identifiers")
struct UserRowIdentifierTests {
    @Test("NULL, empty and whitespace-only are none", arguments: [nil, "", " ", "\t", "\n", " \r\n\t ", "\u{00A0}", "\u{2003}"])
    func blankIsNone(_ stored: String?) {
        #expect(UserRow.storedIdentifier(stored) == nil)
    }

    @Test("any other value is kept exactly: case, inner and outer spaces", arguments: ["1000", " 1000 ", "cus_A b", "ABCDEF-uuid", "x\n"])
    func valueIsKept(_ stored: String) {
        #expect(UserRow.storedIdentifier(stored) == stored)
    }

    @Test("a row built with a blank store identifier holds none for that store")
    func rowIdentifiers() {
        let row = UserRow(id: "u", currentTier: 0, status: "none", identifiers: [.stripe: " ", .googlePlay: "tok"])
        #expect(row.identifiers == [.googlePlay: "tok"])
    }
}
