package kbflow;

import static org.neo4j.configuration.GraphDatabaseSettings.DEFAULT_DATABASE_NAME;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;

/**
 * Neo4j Community 5 embedded, reachable over Bolt without authentication: a test server that
 * needs no Neo4j distribution, only Maven Central.
 *
 * <p>Usage: Main HOME_DIR HOST PORT READY_FILE. READY_FILE is written once the default database
 * answers queries, so the start script waits for a real readiness signal, not an open port.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        Path home = Path.of(args[0]);
        Path ready = Path.of(args[3]);
        Files.deleteIfExists(ready);
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address,
                        new SocketAddress(args[1], Integer.parseInt(args[2])))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(64))
                .build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            dbms.shutdown();
            stopped.countDown();
        }));
        dbms.database(DEFAULT_DATABASE_NAME).executeTransactionally("RETURN 1");
        Files.writeString(ready, "ready\n");
        stopped.await();
    }
}
