package dev.concertcache.api.concert;

import java.time.LocalDate;

import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;

/**
 * The body of a concert create or update.
 */
@ValidDateRange
record ConcertRequest(@NotBlank @Size(max = ConcertRequest.NAME_LENGTH) String title,
		@NotBlank @Size(max = ConcertRequest.NAME_LENGTH) String artist,
		@NotBlank @Size(max = ConcertRequest.NAME_LENGTH) String venue,
		@Size(max = ConcertRequest.DESCRIPTION_LENGTH) String description, @NotNull LocalDate startDate,
		@NotNull LocalDate endDate) {

	/** Column length of title, artist and venue (V1 migration). */
	static final int NAME_LENGTH = 200;

	/** Column length of description (V1 migration). */
	static final int DESCRIPTION_LENGTH = 4000;

	String descriptionOrEmpty() {
		return (this.description != null) ? this.description : "";
	}

}
