package dev.concertcache.api.invalidation;

import java.util.List;

import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.Size;

import io.swagger.v3.oas.annotations.media.ArraySchema;
import io.swagger.v3.oas.annotations.media.Schema;

/**
 * The concerts another writer changed (or created, or deleted).
 */
record InvalidationRequest(@ArraySchema(arraySchema = @Schema(description = "Ids of the concerts that changed"),
		minItems = 1, maxItems = MAX_CONCERTS, schema = @Schema(minimum = "1", example = "42"))
@NotEmpty @Size(max = MAX_CONCERTS) List<@NotNull @Positive Long> concertIds) {

	/** Bounds the work (two Redis round trips per id) one request can ask for; a larger batch is split by the caller. */
	static final int MAX_CONCERTS = 1000;

}
