/* SPDX-License-Identifier: MIT */
/*
 * The tools' numbers are in plain units (tools/common/units.c): a
 * duration in the unit that fits with three significant digits, never an
 * exponent ("1.506e+05" was mrc-bench's label for 150.6 µs), negative
 * values kept.  Control: the format the plots used before, %.4g, does
 * produce an exponent for that value, so the exponent check can fail.
 */
#include <stdio.h>
#include <string.h>
#include "../tools/common/units.c"

static int has_exponent(const char *s)
{
	for (; *s; s++)
		if ((s[0] == 'e' || s[0] == 'E') && (s[1] == '+' || s[1] == '-'))
			return 1;
	return 0;
}

static int expect_ns(double ns, const char *sep, const char *want)
{
	char buf[64];

	units_ns(ns, sep, buf, sizeof(buf));
	if (strcmp(buf, want)) {
		fprintf(stderr, "units_ns(%g): '%s', want '%s'\n", ns, buf, want);
		return 1;
	}
	return 0;
}

int main(void)
{
	static const double big[] = { 150600, 1.506e9, 123456789, 99999.9, -2.5e7 };
	char buf[64];
	int bad = 0;

	bad |= expect_ns(21.23, " ", "21.2 ns");
	bad |= expect_ns(150600, " ", "151 \xc2\xb5s");
	bad |= expect_ns(150600, "", "151\xc2\xb5s");
	bad |= expect_ns(1506, " ", "1.51 \xc2\xb5s");
	bad |= expect_ns(-3.4e6, " ", "-3.40 ms");
	bad |= expect_ns(2.5e9, " ", "2.50 s");
	bad |= expect_ns(0, " ", "0.00 ns");
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		units_plain(big[i], buf, sizeof(buf));
		if (has_exponent(buf)) {
			fprintf(stderr, "units_plain(%g): '%s' has an exponent\n", big[i], buf);
			bad = 1;
		}
		units_ns(big[i], " ", buf, sizeof(buf));
		if (has_exponent(buf)) {
			fprintf(stderr, "units_ns(%g): '%s' has an exponent\n", big[i], buf);
			bad = 1;
		}
	}
	units_plain(0.125, buf, sizeof(buf));
	bad |= strcmp(buf, "0.125") != 0;
	units_plain(-42, buf, sizeof(buf));
	bad |= strcmp(buf, "-42") != 0;
	bad |= units_width("151 \xc2\xb5s") != 6;
	/* Control: the old plot label format shows the exponent we reject. */
	snprintf(buf, sizeof(buf), "%.4g", 150600.0);
	if (!has_exponent(buf)) {
		fprintf(stderr, "control: '%s' has no exponent: the check cannot fail\n", buf);
		bad = 1;
	}
	printf("%s\n", bad ? "FAIL" : "PASS");
	return bad;
}
