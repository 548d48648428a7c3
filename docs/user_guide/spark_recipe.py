"""Explain a Spark DataFrame with mapInPandas and a broadcast explainer.

Run as a script (``python spark_recipe.py``): it needs ``pyspark`` and a Java
runtime. The explainer is fitted once on the driver, broadcast to the
executors (a fitted explainer pickles to plain arrays), and each partition is
explained by the explainer's own ``explain``: the values are those of an
in-memory call on the same rows.
"""

import numpy as np
import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql.types import DoubleType, LongType, StructField, StructType
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor

from skshapley import TreeExplainer


def explain_with_spark(spark, explainer, rows: pd.DataFrame) -> pd.DataFrame:
    """The Shapley values of ``rows`` (with an ``id`` column), computed by Spark."""
    shared = spark.sparkContext.broadcast(explainer)  # sent to each executor once
    features = list(explainer.feature_names_in_)
    # One double column per player; several outputs would need one per
    # (output, player), named e.g. f"phi_{output}_{player}".
    schema = StructType(
        [StructField("id", LongType())]
        + [StructField(f"phi_{name}", DoubleType()) for name in explainer.player_names_]
    )

    def explain_partition(frames):
        explainer = shared.value
        for frame in frames:
            phi = explainer.explain(frame[features]).add_prefix("phi_")
            ids = frame[["id"]].reset_index(drop=True)
            yield pd.concat([ids, phi.reset_index(drop=True)], axis=1)

    spark_rows = spark.createDataFrame(rows)
    return spark_rows.mapInPandas(explain_partition, schema).toPandas()


def main() -> None:
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = HistGradientBoostingRegressor(max_iter=50, random_state=0).fit(X, y)
    explainer = TreeExplainer(model).fit()
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    try:
        rows = X.assign(id=np.arange(len(X)))
        phi = explain_with_spark(spark, explainer, rows).sort_values("id")
    finally:
        spark.stop()
    in_memory = explainer.explain(X).add_prefix("phi_")
    assert (phi.drop(columns="id").to_numpy() == in_memory.to_numpy()).all()
    print(f"{len(phi)} rows explained by Spark, equal to the in-memory values")


if __name__ == "__main__":
    main()
