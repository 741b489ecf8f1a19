package dev.concertcache.api.concert;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;

/**
 * The end date of a concert must not be before its start date; reported on {@code endDate}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Constraint(validatedBy = ValidDateRange.Validator.class)
@interface ValidDateRange {

	String message() default "must not be before startDate";

	Class<?>[] groups() default {};

	Class<? extends Payload>[] payload() default {};

	class Validator implements ConstraintValidator<ValidDateRange, ConcertRequest> {

		@Override
		public boolean isValid(ConcertRequest request, ConstraintValidatorContext context) {
			if (request.startDate() == null || request.endDate() == null
					|| !request.endDate().isBefore(request.startDate())) {
				return true;
			}
			context.disableDefaultConstraintViolation();
			context.buildConstraintViolationWithTemplate(context.getDefaultConstraintMessageTemplate())
				.addPropertyNode("endDate")
				.addConstraintViolation();
			return false;
		}

	}

}
