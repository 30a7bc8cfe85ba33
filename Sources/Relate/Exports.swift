// What `import Relate` brings of the connection layer: the types a user of contexts and
// `Database` meets (a context's connection and what its queries answer, the errors, the
// value protocols). The rest of RelatePostgres (replication messages, wire types, type
// mappings) stays behind `import RelatePostgres`, for those who use the connection alone.
@_exported import class RelatePostgres.Connection
@_exported import class RelatePostgres.PostgresResult
@_exported import struct RelatePostgres.PostgresRow
@_exported import struct RelatePostgres.PostgresColumn
@_exported import struct RelatePostgres.PostgresStatement
@_exported import enum RelatePostgres.PostgresFormat
@_exported import struct RelatePostgres.PostgresError
@_exported import struct RelatePostgres.SQLState
@_exported import protocol RelatePostgres.PostgresEncodable
@_exported import protocol RelatePostgres.PostgresDecodable
@_exported import typealias RelatePostgres.PostgresCodable
@_exported import struct RelatePostgres.PostgresDecodingError
@_exported import struct RelatePostgres.PostgresEncodingError
// The values attributes read as (generated properties have these types).
@_exported import enum RelatePostgres.JSONValue
@_exported import struct RelatePostgres.PostgresRange
@_exported import protocol RelatePostgres.PostgresRangeBound
@_exported import struct RelatePostgres.PostgresInterval
@_exported import struct RelatePostgres.PostgresInet
@_exported import struct RelatePostgres.PostgresMacAddress
@_exported import struct RelatePostgres.PostgresTime
@_exported import struct RelatePostgres.PostgresRecord
@_exported import struct RelatePostgres.PostgresRecordArray
@_exported import struct RelatePostgres.PostgresMultirange
