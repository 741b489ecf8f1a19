package dev.concertcache.testsupport;

import dev.concertcache.testsupport.RedisCluster.Node;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One cluster for the class (creating one takes seconds): the tests run in order, as a failover then a
 * restart would happen to a cluster in production.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisClusterTests {

	private static final RedisCluster cluster = new RedisCluster();

	@BeforeAll
	static void start() {
		cluster.start();
	}

	@AfterAll
	static void stop() {
		cluster.close();
	}

	@Test
	@Order(1)
	void threePrimariesWithOneReplicaEachServeEverySlot() {
		String info = cluster.nodes().get(0).command("CLUSTER", "INFO");
		assertThat(info).contains("cluster_state:ok", "cluster_slots_assigned:16384", "cluster_known_nodes:6",
				"cluster_size:3");
		assertThat(cluster.nodes().stream().filter(Node::isPrimary)).hasSize(3);
		assertThat(cluster.nodesProperty().split(",")).hasSize(6).allMatch((node) -> node.startsWith("127.0.0.1:"));
	}

	@Test
	@Order(2)
	void aKeyIsStoredOnThePrimaryOfItsSlotAndCopiedToItsReplica() {
		Node primary = cluster.primaryFor("concert:1");
		assertThat(primary.command("SET", "concert:1", "Aida")).contains("OK");
		assertThat(primary.command("WAIT", "1", "5000").trim()).isEqualTo("1");
		assertThat(cluster.replicaOf(primary).command("DBSIZE").trim()).isEqualTo("1");
		assertThat(cluster.nodes().stream().filter((node) -> node.command("DBSIZE").trim().equals("1"))).hasSize(2);
	}

	@Test
	@Order(3)
	void aKilledPrimaryIsReplacedByItsReplicaWithTheReplicatedKeys() {
		Node primary = cluster.primaryFor("concert:1");
		Node replica = cluster.replicaOf(primary);

		Node promoted = cluster.killPrimary(primary);

		assertThat(promoted).isSameAs(replica);
		assertThat(promoted.isPrimary()).isTrue();
		assertThat(primary.isRunning()).isFalse();
		assertThat(cluster.primaryFor("concert:1")).isSameAs(promoted);
		assertThat(promoted.command("GET", "concert:1").trim()).isEqualTo("Aida");
		assertThat(promoted.command("CLUSTER", "INFO")).contains("cluster_state:ok");
	}

	@Test
	@Order(4)
	void aRestartedFormerPrimaryRejoinsAsTheReplicaOfItsSuccessor() {
		Node former = cluster.nodes().stream().filter((node) -> !node.isRunning()).findFirst().orElseThrow();
		Node successor = cluster.primaryFor("concert:1");

		cluster.restart(former);

		assertThat(former.isRunning()).isTrue();
		assertThat(former.isPrimary()).isFalse();
		assertThat(cluster.replicaOf(successor)).isSameAs(former);
		assertThat(former.command("CLUSTER", "INFO")).contains("cluster_state:ok", "cluster_known_nodes:6");
		assertThat(former.command("DBSIZE").trim()).isEqualTo("1");
	}

}
