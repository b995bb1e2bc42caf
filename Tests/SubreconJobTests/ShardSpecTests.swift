import SubreconPorts
import Testing

@Suite("ShardSpec")
struct ShardSpecTests {
    @Test("the hash is md5's first four bytes, big-endian (RFC 1321 vectors)")
    func knownVectors() {
        // md5("abc") = 900150983cd24fb0..., md5("") = d41d8cd98f00b204...
        #expect(ShardSpec.hash(of: "abc") == 0x9001_5098)
        #expect(ShardSpec.hash(of: "") == 0xd41d_8cd9)
        // md5("The quick brown fox jumps over the lazy dog") = 9e107d9d372bb682...
        #expect(ShardSpec.hash(of: "The quick brown fox jumps over the lazy dog") == 0x9e10_7d9d)
        // a message longer than one 64-byte block: md5 of 80 digits = 57edf4a22be3c955...
        let digits = String(repeating: "1234567890", count: 8)
        #expect(ShardSpec.hash(of: digits) == 0x57ed_f4a2)
    }

    @Test("I/N parses when 0 <= I < N and nothing else does")
    func parsing() {
        #expect(ShardSpec(parsing: "0/1") == .all)
        #expect(ShardSpec(parsing: "2/3") == ShardSpec(index: 2, count: 3))
        for bad in ["3/3", "-1/2", "1/0", "1", "a/b", "1/2/3", ""] {
            #expect(ShardSpec(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test("every id belongs to exactly one shard of N")
    func partition() {
        for id in (0..<200).map({ "user-\($0)" }) {
            let owners = (0..<5).filter { ShardSpec(index: $0, count: 5).contains(id) }
            #expect(owners.count == 1)
        }
    }

    @Test("a shard read back from a damaged run row is an error, never a trap", arguments: [(0, 0), (2, 2), (-1, 4), (0, -3)])
    func storedOutOfRange(index: Int, count: Int) {
        #expect(throws: StoredShardOutOfRange.self) { try ShardSpec.stored(index: index, count: count) }
    }

    @Test("a stored shard in range reads back as itself")
    func storedInRange() throws {
        #expect(try ShardSpec.stored(index: 3, count: 4) == ShardSpec(index: 3, count: 4))
    }
}
