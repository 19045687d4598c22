-- One model's price ($model, $input, $output, $cached per million tokens, $effective, $source).
INSERT INTO model_prices VALUES ($model, $input, $output, $cached, $effective, $source);
