package dev.concertcache.testsupport;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import io.lettuce.core.protocol.CommandArgs;

/**
 * Runs a test's action on the thread that is about to send a matching command to Redis, before it is sent: Lettuce
 * calls a command listener's {@code commandStarted} on the sending thread. This is how a test parks an instance's
 * thread between two steps (a reader about to ask for a held lock again, an eviction about to announce itself, the
 * listener about to ask which server it is on) without any hook in the cache's own classes.
 */
public final class CommandTrap implements CommandListener {

	/** The occurrence of a rule that runs before every matching command. */
	private static final int EVERY = 0;

	private final List<Rule> rules = new CopyOnWriteArrayList<>();

	/** Runs {@code action} before every command {@code when} accepts, until it is {@link #remove(Rule) removed}. */
	public Rule always(Predicate<Sent> when, Runnable action) {
		return add(new Rule(when, action, EVERY));
	}

	/** Runs {@code action} once, before the first command {@code when} accepts. */
	public Rule once(Predicate<Sent> when, Runnable action) {
		return nth(1, when, action);
	}

	/** Runs {@code action} once, before the {@code n}th command {@code when} accepts. */
	public Rule nth(int n, Predicate<Sent> when, Runnable action) {
		return add(new Rule(when, action, n));
	}

	private Rule add(Rule rule) {
		this.rules.add(rule);
		return rule;
	}

	/** Stops running {@code rule}'s action. */
	public void remove(Rule rule) {
		this.rules.remove(rule);
	}

	@Override
	public void commandStarted(CommandStartedEvent event) {
		String thread = Thread.currentThread().getName();
		if (this.rules.isEmpty() || thread.startsWith("lettuce-")) {
			// Never park Lettuce's own threads: every connection's replies would wait.
			return;
		}
		CommandArgs<?, ?> args = event.getCommand().getArgs();
		Sent sent = new Sent(event.getCommand().getType().toString(), (args != null) ? args.toCommandString() : "",
				thread);
		for (Rule rule : this.rules) {
			if (!rule.when().test(sent)) {
				continue;
			}
			if (rule.n() == EVERY) {
				rule.fired().incrementAndGet();
				rule.action().run();
			}
			else if (rule.matched().incrementAndGet() == rule.n()) {
				this.rules.remove(rule);
				rule.fired().incrementAndGet();
				rule.action().run();
			}
		}
	}

	/** A command about to be sent: its name, its arguments as Lettuce writes them, the sending thread's name. */
	public record Sent(String command, String arguments, String thread) {

		/** A script: {@code EVAL} or {@code EVALSHA}. */
		public static Predicate<Sent> script() {
			return (sent) -> sent.command().startsWith("EVAL");
		}

		public static Predicate<Sent> named(String command) {
			return (sent) -> sent.command().equals(command);
		}

		public static Predicate<Sent> naming(String key) {
			return (sent) -> sent.arguments().contains(key);
		}

		public static Predicate<Sent> onThread(String name) {
			return (sent) -> sent.thread().equals(name);
		}

	}

	/** What to run before which command; {@link #fired()} counts the commands it ran before. */
	public record Rule(Predicate<Sent> when, Runnable action, int n, AtomicInteger matched, AtomicInteger fired) {

		Rule(Predicate<Sent> when, Runnable action, int n) {
			this(when, action, n, new AtomicInteger(), new AtomicInteger());
		}

	}

}
