import ColonyModels
import NIOCore
import PostgresNIO

// `LocalDate` binds to and reads from Postgres `date` columns (binary: days since 2000-01-01),
// also inside arrays (`date[]`) for set-based statements.
extension LocalDate: PostgresNonThrowingEncodable, PostgresArrayEncodable, PostgresDecodable, PostgresArrayDecodable {
    static let postgresEpochDayNumber = 10_957  // 2000-01-01

    public static var psqlType: PostgresDataType { .date }
    public static var psqlFormat: PostgresFormat { .binary }
    public static var psqlArrayType: PostgresDataType { .dateArray }

    public func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        byteBuffer.writeInteger(Int32(dayNumber - Self.postgresEpochDayNumber))
    }

    public init<JSONDecoder: PostgresJSONDecoder>(from buffer: inout ByteBuffer, type: PostgresDataType, format: PostgresFormat, context: PostgresDecodingContext<JSONDecoder>) throws {
        guard type == .date else { throw PostgresDecodingError.Code.typeMismatch }
        switch format {
        case .binary:
            guard buffer.readableBytes == 4, let days = buffer.readInteger(as: Int32.self) else { throw PostgresDecodingError.Code.failure }
            self.init(dayNumber: Int(days) + Self.postgresEpochDayNumber)
        case .text:
            guard let text = buffer.readString(length: buffer.readableBytes), let date = LocalDate(text) else { throw PostgresDecodingError.Code.failure }
            self = date
        }
    }
}
