import Configuration
import Foundation
import Logging
import RelateConfiguration
import Testing

@testable import Relate

/// `Configuration(config:)` and `Database(config:)` from swift-configuration (issue 40,
/// item 4): every option under its documented key, the URL, password and replicas secret.
@Suite struct ConfigReaderTests {
    /// Keeps which keys were read and whether each value was marked secret.
    final class Reporter: AccessReporter {
        let reads = Locked<[String: Bool]>([:])
        func report(_ event: AccessEvent) {
            guard case .success(let value?) = event.result else { return }
            reads.withLock { $0[event.metadata.key.components.joined(separator: "."), default: false] = value.isSecret }
        }
    }

    @Test func everyOptionIsReadUnderItsKey() throws {
        let provider = InMemoryProvider(values: [
            "db.password": "hunter2", "db.schemas": .init(.stringArray(["app", "billing"]), isSecret: false),
            "db.manyToMany": "strict", "db.maxConnections": 12, "db.minIdleConnections": 3,
            "db.connectTimeout": 4.0, "db.statementTimeout": 2.5, "db.idleTimeout": 300.0, "db.checkoutTimeout": 0.0,
            "db.replicas": .init(.stringArray(["postgresql://r1/app"]), isSecret: false), "db.replicaWait": 0.25,
            "db.replicaRetry": 7.0, "db.shutdownGracePeriod": 20.0, "db.preparesStatements": false,
            "db.logsValuesForDebugging": true, "db.queryLogLevel": "trace",
        ])
        let reporter = Reporter()
        let configuration = try Relate.Configuration(config: ConfigReader(provider: provider, accessReporter: reporter).scoped(to: "db"))
        #expect(configuration.schemas == ["app", "billing"])
        #expect(configuration.manyToMany == .strict)
        #expect(configuration.maxConnections == 12 && configuration.minIdleConnections == 3)
        #expect(configuration.connectTimeout == .seconds(4) && configuration.statementTimeout == .milliseconds(2500))
        #expect(configuration.idleTimeout == .seconds(300) && configuration.checkoutTimeout == nil)
        #expect(configuration.replicas == ["postgresql://r1/app"])
        #expect(configuration.replicaWait == .milliseconds(250) && configuration.replicaRetry == .seconds(7))
        #expect(configuration.shutdownGracePeriod == .seconds(20))
        #expect(!configuration.preparesStatements && configuration.logsValuesForDebugging)
        #expect(configuration.queryLogLevel == .trace)
        #expect(configuration.connectionDefaults == ["connect_timeout": "4", "password": "hunter2"])
        // The password and the replicas' URLs are read as secrets (kept out of access logs).
        let reads = reporter.reads.withLock { $0 }
        #expect(reads["db.password"] == true && reads["db.replicas"] == true)
        #expect(reads["db.maxConnections"] == false)
    }

    /// A configuration printed, debug-printed or dumped shows neither the password nor a
    /// replica's URL (which may hold one): a log line of it showed both.
    @Test func aConfigurationPrintsNoSecret() throws {
        let provider = InMemoryProvider(values: [
            "db.password": .init(.string("hunter2-secret"), isSecret: true),
            "db.replicas": .init(.stringArray(["postgresql://u:replica-secret@r1/app"]), isSecret: true),
        ])
        let configuration = try Relate.Configuration(config: ConfigReader(provider: provider).scoped(to: "db"))
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in ["\(configuration)", String(reflecting: configuration), dumped] {
            #expect(!text.contains("secret"), "\(text)")
            #expect(text.contains("maxConnections"))
        }
    }

    @Test func absentKeysKeepTheirDefaults() throws {
        let configuration = try Relate.Configuration(config: ConfigReader(provider: InMemoryProvider(values: [:])))
        let defaults = Relate.Configuration()
        #expect(configuration.maxConnections == defaults.maxConnections)
        #expect(configuration.connectTimeout == defaults.connectTimeout && configuration.statementTimeout == nil)
        #expect(configuration.shutdownGracePeriod == defaults.shutdownGracePeriod)
        #expect(configuration.queryLogLevel == .debug && configuration.manyToMany == .keyed)
        #expect(configuration.password == nil)
    }

    @Test func anUnknownRuleOrLevelNamesItsKey() {
        #expect {
            try Relate.Configuration(config: ConfigReader(provider: InMemoryProvider(values: ["manyToMany": "loose"])))
        } throws: { ($0 as? RelateError)?.key == "manyToMany" }
        #expect {
            try Relate.Configuration(config: ConfigReader(provider: InMemoryProvider(values: ["queryLogLevel": "verbose"])))
        } throws: { ($0 as? RelateError)?.key == "queryLogLevel" }
    }

    @Test func aDatabaseOpensFromItsSecretURL() async throws {
        let reporter = Reporter()
        let provider = InMemoryProvider(values: ["database.url": .init(.string(try TestDatabase.url()), isSecret: false), "database.maxConnections": 2])
        let database = try Database(config: ConfigReader(provider: provider, accessReporter: reporter).scoped(to: "database"))
        defer { database.close() }
        #expect(database.status.primary.maxConnections == 2)
        #expect(try await database.ping() > .zero)
        #expect(reporter.reads.withLock { $0["database.url"] } == true)
        #expect(throws: RelateError.self) { try Database(config: ConfigReader(provider: InMemoryProvider(values: [:]))) }
    }
}
