import Foundation
import NIOCore

/// A zip archive of stored (uncompressed) entries, written in memory: what the data export hands
/// its user, readable by every unzip tool and by iOS's Files app. Entries are stored, not
/// deflated: the bulk of an export is pictures and audio that do not compress. No zip64, so an
/// archive and each entry stay under 4 GiB and 65,535 entries (`add` throws past them).
public struct ZipArchive: Sendable {
    public struct TooLarge: Error, CustomStringConvertible {
        public var description: String { "the archive would pass zip's 4 GiB or 65,535-entry limit" }
    }

    private struct Entry {
        var name: [UInt8]
        var crc: UInt32
        var size: UInt32
        var offset: UInt32
    }

    private var body = ByteBuffer()
    private var entries: [Entry] = []
    // 1980-01-01 00:00 in DOS time and date: entries carry no time of their own.
    private static let dosTime: UInt16 = 0
    private static let dosDate: UInt16 = (0 << 9) | (1 << 5) | 1

    public init() {}

    public var count: Int { entries.count }

    /// Adds a file at `path` (`/`-separated, UTF-8).
    public mutating func add(_ path: String, _ data: ByteBuffer) throws {
        let name = Array(path.utf8)
        guard entries.count < 65_535, data.readableBytes < Int(UInt32.max), body.writerIndex + data.readableBytes + name.count + 30 < Int(UInt32.max) else {
            throw TooLarge()
        }
        let entry = Entry(name: name, crc: CRC32.checksum(data.readableBytesView), size: UInt32(data.readableBytes), offset: UInt32(body.writerIndex))
        // Local file header.
        body.writeInteger(UInt32(0x0403_4b50), endianness: .little)
        body.writeInteger(UInt16(20), endianness: .little)          // version needed: 2.0
        body.writeInteger(UInt16(0x0800), endianness: .little)      // flags: names are UTF-8
        body.writeInteger(UInt16(0), endianness: .little)           // method: stored
        body.writeInteger(Self.dosTime, endianness: .little)
        body.writeInteger(Self.dosDate, endianness: .little)
        body.writeInteger(entry.crc, endianness: .little)
        body.writeInteger(entry.size, endianness: .little)          // compressed size
        body.writeInteger(entry.size, endianness: .little)          // uncompressed size
        body.writeInteger(UInt16(name.count), endianness: .little)
        body.writeInteger(UInt16(0), endianness: .little)           // extra field length
        body.writeBytes(name)
        body.writeImmutableBuffer(data)
        entries.append(entry)
    }

    /// The whole archive: the entries, the central directory, its end record.
    public func finished() throws -> ByteBuffer {
        var out = body
        let directoryStart = out.writerIndex
        for entry in entries {
            out.writeInteger(UInt32(0x0201_4b50), endianness: .little)
            out.writeInteger(UInt16(0x031E), endianness: .little)   // made by: Unix, 3.0
            out.writeInteger(UInt16(20), endianness: .little)
            out.writeInteger(UInt16(0x0800), endianness: .little)
            out.writeInteger(UInt16(0), endianness: .little)
            out.writeInteger(Self.dosTime, endianness: .little)
            out.writeInteger(Self.dosDate, endianness: .little)
            out.writeInteger(entry.crc, endianness: .little)
            out.writeInteger(entry.size, endianness: .little)
            out.writeInteger(entry.size, endianness: .little)
            out.writeInteger(UInt16(entry.name.count), endianness: .little)
            out.writeInteger(UInt16(0), endianness: .little)        // extra
            out.writeInteger(UInt16(0), endianness: .little)        // comment
            out.writeInteger(UInt16(0), endianness: .little)        // disk
            out.writeInteger(UInt16(0), endianness: .little)        // internal attributes
            out.writeInteger(UInt32(0o100644) << 16, endianness: .little)  // external: a regular file, rw-r--r--
            out.writeInteger(entry.offset, endianness: .little)
            out.writeBytes(entry.name)
        }
        let directorySize = out.writerIndex - directoryStart
        guard out.writerIndex < Int(UInt32.max) else { throw TooLarge() }
        out.writeInteger(UInt32(0x0605_4b50), endianness: .little)
        out.writeInteger(UInt16(0), endianness: .little)
        out.writeInteger(UInt16(0), endianness: .little)
        out.writeInteger(UInt16(entries.count), endianness: .little)
        out.writeInteger(UInt16(entries.count), endianness: .little)
        out.writeInteger(UInt32(directorySize), endianness: .little)
        out.writeInteger(UInt32(directoryStart), endianness: .little)
        out.writeInteger(UInt16(0), endianness: .little)            // comment length
        return out
    }
}

/// CRC-32 (IEEE 802.3, reflected, as zip and gzip use it).
public enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    public static func checksum<Bytes: Sequence>(_ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { table in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
