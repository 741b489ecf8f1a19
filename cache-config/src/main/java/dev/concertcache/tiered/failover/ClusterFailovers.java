package dev.concertcache.tiered.failover;

import java.util.BitSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode.NodeFlag;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

/**
 * Watches the topology of a Redis Cluster, as Lettuce refreshes it, and reports every change of the primary serving
 * any slot, with a config epoch of the new topology and the slots whose primary changed (ADR 0039, "Failover rule").
 * Every cache uses every slot, so any slot's new primary counts.
 */
final class ClusterFailovers {

	private static final Log logger = LogFactory.getLog(ClusterFailovers.class);

	private final RedisClusterClient client;

	private final Listener failover;

	private volatile Disposable subscription;

	private final AtomicBoolean refreshing = new AtomicBoolean();

	/** The primary of each slot in the topology last reported, {@code null} before {@link #start()}. */
	private volatile String @Nullable [] known;

	/**
	 * @param failover called on Lettuce's refresh or event thread, maybe more than once per failover: it must not
	 * block
	 */
	ClusterFailovers(RedisClusterClient client, Listener failover) {
		this.client = client;
		this.failover = failover;
	}

	void start() {
		this.known = primaries(this.client.getPartitions().getPartitions());
		ClusterClientOptions options = (this.client.getOptions() instanceof ClusterClientOptions cluster) ? cluster
				: ClusterClientOptions.builder(this.client.getOptions()).build();
		this.client.setOptions(options.mutate().nodeFilter(options.getNodeFilter().and(this::beforeRouting)).build());
		this.subscription = this.client.getResources()
			.eventBus()
			.get()
			.filter(ClusterTopologyChangedEvent.class::isInstance)
			.cast(ClusterTopologyChangedEvent.class)
			.subscribe(this::onTopologyChange);
	}

	/**
	 * Reads the topology now, as Lettuce's adaptive refresh would on a redirect it followed: the client follows
	 * none (a redirected read could reach a promoted replica before {@link #beforeRouting} saw it, ADR 0039), so
	 * the failed command is the only sign. One refresh at a time: every command sent to the old node fails alike.
	 */
	void refresh() {
		if (this.refreshing.compareAndSet(false, true)) {
			try {
				this.client.refreshPartitionsAsync().whenComplete((done, failure) -> this.refreshing.set(false));
			}
			catch (RuntimeException ex) {
				// A client shutting down, say: the next MOVED tries again.
				this.refreshing.set(false);
				logger.debug("Cluster topology refresh not started", ex);
			}
		}
	}

	void stop() {
		Disposable subscription = this.subscription;
		if (subscription != null) {
			subscription.dispose();
		}
	}

	/**
	 * Sees each node of a topology Lettuce has just read, before it routes a command by it, and reports a primary
	 * that serves a slot another node served. Lettuce announces a new topology on its event bus before it uses it,
	 * but delivers the event on another thread ({@code publishOn}), when a read may already reach the promoted
	 * replica. Keeps every node.
	 */
	private boolean beforeRouting(RedisClusterNode node) {
		String[] known = this.known;
		if (known != null && (node.is(NodeFlag.UPSTREAM) || node.is(NodeFlag.MASTER))) {
			BitSet moved = null;
			for (int slot : node.getSlots()) {
				if (known[slot] != null && !known[slot].equals(node.getNodeId())) {
					moved = (moved != null) ? moved : new BitSet(SlotHash.SLOT_COUNT);
					moved.set(slot);
				}
			}
			if (moved != null) {
				this.failover.primariesChanged(node.getConfigEpoch(), moved);
			}
		}
		return true;
	}

	private void onTopologyChange(ClusterTopologyChangedEvent event) {
		this.known = primaries(event.after());
		BitSet moved = movedSlots(event.before(), event.after());
		if (logger.isDebugEnabled()) {
			logger.debug("Cluster topology changed; primaries of " + moved.cardinality() + " slots changed");
		}
		if (!moved.isEmpty()) {
			this.failover.primariesChanged(highestConfigEpoch(event.after()), moved);
		}
	}

	/** The slots that had a primary before and have another one (or none) after; none in the first topology. */
	private static BitSet movedSlots(List<RedisClusterNode> before, List<RedisClusterNode> after) {
		String[] previous = primaries(before);
		String[] current = primaries(after);
		BitSet moved = new BitSet(SlotHash.SLOT_COUNT);
		for (int slot = 0; slot < SlotHash.SLOT_COUNT; slot++) {
			if (previous[slot] != null && !previous[slot].equals(current[slot])) {
				moved.set(slot);
			}
		}
		return moved;
	}

	/**
	 * The node that owns each slot, failed or not: a primary seen failed in one refresh still owns its slots
	 * until the next one shows them on its promoted replica.
	 */
	private static String[] primaries(List<RedisClusterNode> nodes) {
		String[] primaries = new String[SlotHash.SLOT_COUNT];
		for (RedisClusterNode node : nodes) {
			if (node.is(NodeFlag.UPSTREAM) || node.is(NodeFlag.MASTER)) {
				for (int slot : node.getSlots()) {
					primaries[slot] = node.getNodeId();
				}
			}
		}
		return primaries;
	}

	private static long highestConfigEpoch(List<RedisClusterNode> nodes) {
		return nodes.stream().mapToLong(RedisClusterNode::getConfigEpoch).max().orElse(0);
	}

	/** Told of primaries that changed. */
	@FunctionalInterface
	interface Listener {

		/**
		 * @param epoch a config epoch of the topology that changed them (higher for a later failover)
		 * @param slots the slots whose primary changed
		 */
		void primariesChanged(long epoch, BitSet slots);

	}

}
