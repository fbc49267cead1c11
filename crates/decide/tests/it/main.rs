mod examples;
