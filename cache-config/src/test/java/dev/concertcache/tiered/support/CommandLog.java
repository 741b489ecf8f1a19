package dev.concertcache.tiered.support;

import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;

/**
 * The commands an instance's client sent to Redis, one per round trip (a script's own calls are not among them),
 * as Lettuce's command listener sees them.
 */
final class CommandLog implements CommandListener {

	private final Queue<Sent> sent = new ConcurrentLinkedQueue<>();

	@Override
	public void commandStarted(CommandStartedEvent event) {
		this.sent.add(new Sent(event.getCommand().getType().toString(), event.getCommand().getArgs().toCommandString()));
	}

	/** The names of the commands sent since the last {@link #clear()} whose arguments name {@code key}. */
	List<String> naming(String key) {
		return this.sent.stream().filter((sent) -> sent.arguments().contains(key)).map(Sent::command).toList();
	}

	void clear() {
		this.sent.clear();
	}

	private record Sent(String command, String arguments) {
	}

}
